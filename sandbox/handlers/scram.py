"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): SCRAM users (KIP-554).

As Kafka 4.1 answers them (brokers and controllers both advertise v0 of each): describe as a
broker's metadata image does (``ScramImage.describe``; a controller has no handler for it and
answers UNKNOWN_SERVER_ERROR, or nothing for null users), alter as the controller does
(``ScramControlManager.alterCredentials``), with the same error codes and words:

* describe with no users (null or empty) answers every user that has a credential; a named user
  without one gets RESOURCE_NOT_FOUND "Attempt to describe a user credential that does not exist:
  <user>", a user named twice DUPLICATE_RESOURCE "Cannot describe SCRAM credentials for the same
  user twice in a single request: <user>" (once);
* alter: an empty user name is UNACCEPTABLE_CREDENTIAL "Username must not be empty", a mechanism
  other than 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512) UNSUPPORTED_SASL_MECHANISM "Unknown SCRAM
  mechanism", fewer than 4096 iterations UNACCEPTABLE_CREDENTIAL "Too few iterations", more than
  16384 "Too many iterations", deleting a credential the user does not have RESOURCE_NOT_FOUND
  "Attempt to delete a user credential that does not exist", a user named twice in one request
  (deletions and upsertions together) DUPLICATE_RESOURCE "A user credential cannot be altered
  twice in the same request", and none of that user's entries is applied; the others are.
  An upsertion carries the client's salt and SaltedPassword; the stored and server keys are derived
  from it as the controller does, and the credential logs in on the sandbox's SASL listener at once
  (a deleted one stops working), when that mechanism is enabled there.

Results are answered deletions first, then upsertions, then the refused users, each in request
order (Kafka's HashMaps give no order). No authorizer, as everywhere in the sandbox. Credentials
live in the cluster's state (``ClusterState.scram_credentials``): a request with an injected error
runs on a copy and changes none, and the state file keeps them.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

from sandbox.apis import RequestContext, api
from sandbox.sasl import scram_keys
from sandbox.scram_store import ScramCredentials

UNSUPPORTED_SASL_MECHANISM, UNKNOWN_SERVER_ERROR = 33, -1
RESOURCE_NOT_FOUND, DUPLICATE_RESOURCE, UNACCEPTABLE_CREDENTIAL = 91, 92, 93
MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}  # Kafka's ScramMechanism types
TYPES = {name: code for code, name in MECHANISMS.items()}
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384
DESCRIBE_DUPLICATE = "Cannot describe SCRAM credentials for the same user twice in a single request: "
DESCRIBE_MISSING = "Attempt to describe a user credential that does not exist: "
ALTER_DUPLICATE = "A user credential cannot be altered twice in the same request"

Error = tuple[int, str]


def _check_name_and_mechanism(name: str, mechanism: int) -> Error | None:
    if not name:
        return UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in MECHANISMS:
        return UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def _check_upsertion(u: Any) -> Error | None:
    error = _check_name_and_mechanism(u.name, u.mechanism)
    if error is not None:
        return error
    if u.iterations < MIN_ITERATIONS:
        return UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if u.iterations > MAX_ITERATIONS:
        return UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


def _check_deletion(store: ScramCredentials, d: Any) -> Error | None:
    error = _check_name_and_mechanism(d.name, d.mechanism)
    if error is not None:
        return error
    if store.get(MECHANISMS[d.mechanism], d.name) is None:
        return RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
    return None


def alter(
    store: ScramCredentials, deletions: list[Any], upsertions: list[Any]
) -> list[tuple[str, int, str | None]]:
    """Apply what passes Kafka's checks; (user, error code, message) per user named."""
    to_delete: dict[str, Any] = {}
    to_upsert: dict[str, Any] = {}
    errors: dict[str, Error] = {}
    for d in deletions:
        if d.name in errors:
            continue
        if to_delete.pop(d.name, None) is not None:
            errors[d.name] = DUPLICATE_RESOURCE, ALTER_DUPLICATE
        elif (error := _check_deletion(store, d)) is not None:
            errors[d.name] = error
        else:
            to_delete[d.name] = d
    for u in upsertions:
        if u.name in errors:
            continue
        if to_delete.pop(u.name, None) is not None or to_upsert.pop(u.name, None) is not None:
            errors[u.name] = DUPLICATE_RESOURCE, ALTER_DUPLICATE
        elif (error := _check_upsertion(u)) is not None:
            errors[u.name] = error
        else:
            to_upsert[u.name] = u
    results: list[tuple[str, int, str | None]] = []
    for name, d in to_delete.items():
        store.remove(MECHANISMS[d.mechanism], name)
        results.append((name, 0, None))
    for name, u in to_upsert.items():
        mechanism = MECHANISMS[u.mechanism]
        stored_key, server_key = scram_keys(mechanism, bytes(u.salted_password))
        store.put(mechanism, name, (bytes(u.salt), stored_key, server_key, u.iterations))
        results.append((name, 0, None))
    results.extend((name, code, message) for name, (code, message) in errors.items())
    return results


DR = DescribeUserScramCredentialsResponse


@api(DescribeUserScramCredentialsRequest, 0, 0, controller=True)
def describe_user_scram_credentials(ctx: RequestContext, req: Any) -> Any:
    """Every user's mechanisms and iterations, or the named users'. The empty error messages are
    Kafka's: a result that is not an error leaves the (nullable) message at its default, ""."""
    if ctx.node.is_controller:
        return _controller_describe(ctx, req)
    credentials = ctx.state.scram_credentials.users()
    if not req.users:
        wanted: dict[str, bool] = dict.fromkeys(credentials, False)
    else:
        wanted = {}
        for u in req.users:
            wanted[u.name] = u.name in wanted  # True: named twice
    R = DR.DescribeUserScramCredentialsResult
    results = []
    for user, twice in wanted.items():
        if twice:
            results.append(
                R(
                    user=user,
                    error_code=DUPLICATE_RESOURCE,
                    error_message=DESCRIBE_DUPLICATE + user,
                    credential_infos=[],
                )
            )
        elif user not in credentials:
            results.append(
                R(
                    user=user,
                    error_code=RESOURCE_NOT_FOUND,
                    error_message=DESCRIBE_MISSING + user,
                    credential_infos=[],
                )
            )
        else:
            infos = [
                R.CredentialInfo(mechanism=TYPES[m], iterations=i)
                for m, i in sorted(credentials[user].items(), key=lambda mi: TYPES[mi[0]])
            ]
            results.append(R(user=user, error_code=0, error_message="", credential_infos=infos))
    return DR(version=ctx.version, throttle_time_ms=0, error_code=0, error_message="", results=results)


def _controller_describe(ctx: RequestContext, req: Any) -> Any:
    """Kafka 4.1's controllers advertise DescribeUserScramCredentials but have no handler for it
    (ControllerApis: "Unsupported ApiKey DESCRIBE_USER_SCRAM_CREDENTIALS"): the error response is
    UNKNOWN_SERVER_ERROR with one nameless result per user asked; for null users building that
    response fails (a NullPointerException in getErrorResponse) and no answer is sent at all."""
    if req.users is None:
        return None
    R = DR.DescribeUserScramCredentialsResult
    results = [
        R(user="", error_code=UNKNOWN_SERVER_ERROR, error_message=None, credential_infos=[])
        for _ in req.users
    ]
    return DR(
        version=ctx.version,
        throttle_time_ms=0,
        error_code=UNKNOWN_SERVER_ERROR,
        error_message=None,
        results=results,
    )


AR = AlterUserScramCredentialsResponse


@api(AlterUserScramCredentialsRequest, 0, 0, controller=True)
def alter_user_scram_credentials(ctx: RequestContext, req: Any) -> Any:
    """Delete and upsert credentials, per user; brokers forward it to the controller."""
    st = ctx.state
    with st.lock:
        results = alter(st.scram_credentials, list(req.deletions or []), list(req.upsertions or []))
        if any(code == 0 for _, code, _ in results):
            st.record()
    return AR(
        version=ctx.version,
        throttle_time_ms=0,
        results=[
            AR.AlterUserScramCredentialsResult(user=user, error_code=code, error_message=message)
            for user, code, message in results
        ],
    )
