# shellcheck shell=bash
# Sourced by start.sh: makes the test PKI under $PKI with openssl (never committed; mode 0600 keys).
#   ca.pem / ca.key                the cluster's CA ("Kafka Secured Test CA")
#   broker.pem + broker.key        every node's certificate (serverAuth + clientAuth; SAN localhost,
#                                  127.0.0.1), CN=broker -> principal User:broker; broker-keystore.pem
#                                  (key + chain) is the nodes' ssl.keystore.type=PEM keystore
#   console.pem / console.key      the console's client certificate, CN=console -> User:console (super user)
#   console.p12                    the same as PKCS#12, passphrase in console.p12.pass
#   console-encrypted.key          the same key as a passphrase-protected PKCS#8 PEM (same passphrase)
#   nobody.pem / nobody.key        CN=nobody -> User:nobody: authenticates, has no ACLs
#   expired.pem / expired.key      CN=console, signed by the CA, expired yesterday
#   other-ca.pem, other.pem/.key   a second CA and a CN=console certificate it signed (not trusted)

P12_PASS=console-p12-passphrase

_ca_conf() { # $1 = ca dir
  cat > "$1/ca.cnf" <<EOF
[ ca ]
default_ca = ca_default
[ ca_default ]
database = $1/index.txt
new_certs_dir = $1/issued
serial = $1/serial
default_md = sha256
policy = policy_any
copy_extensions = copy
unique_subject = no
email_in_dn = no
[ policy_any ]
commonName = supplied
organizationName = optional
organizationalUnitName = optional
EOF
  mkdir -p "$1/issued"; : > "$1/index.txt"; openssl rand -hex 16 > "$1/serial"
}

_make_ca() { # $1 = dir, $2 = file stem, $3 = CN
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 365 -keyout "$1/$2.key" -out "$1/$2.pem" \
    -subj "/O=Kafka Secured Test/CN=$3" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

_issue() { # $1 = ca stem, $2 = out stem, $3 = subject, $4 = server|client, $5 = start, $6 = end (openssl ca dates)
  local ext="extendedKeyUsage=clientAuth"
  [[ $4 == server ]] && ext="extendedKeyUsage=serverAuth,clientAuth"
  local san=()
  [[ $4 == server ]] && san=(-addext "subjectAltName=DNS:localhost,IP:127.0.0.1")
  openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$2.key" -out "$PKI/$2.csr" -subj "$3" \
    -addext "$ext" -addext "keyUsage=critical,digitalSignature,keyEncipherment" "${san[@]}" 2>/dev/null
  openssl ca -batch -notext -config "$PKI/$1-db/ca.cnf" -cert "$PKI/$1.pem" -keyfile "$PKI/$1.key" \
    -startdate "$5" -enddate "$6" -in "$PKI/$2.csr" -out "$PKI/$2.pem" 2>/dev/null
  rm -f "$PKI/$2.csr"
}

make_pki() {
  local now_minus_hour later past_start past_end
  now_minus_hour=$(date -u -d '-1 hour' +%Y%m%d%H%M%SZ)
  later=$(date -u -d '+365 days' +%Y%m%d%H%M%SZ)
  past_start=$(date -u -d '-30 days' +%Y%m%d%H%M%SZ)
  past_end=$(date -u -d '-1 day' +%Y%m%d%H%M%SZ)
  rm -rf "$PKI"; mkdir -p "$PKI/ca-db" "$PKI/other-ca-db"; chmod 700 "$PKI"
  ( umask 077
    _make_ca "$PKI" ca "Kafka Secured Test CA"; _ca_conf "$PKI/ca-db"
    _make_ca "$PKI" other-ca "Some Other CA"; _ca_conf "$PKI/other-ca-db"
    _issue ca broker "/O=Kafka Secured Test/OU=brokers/CN=broker" server "$now_minus_hour" "$later"
    _issue ca console "/O=Kafka Secured Test/OU=clients/CN=console" client "$now_minus_hour" "$later"
    _issue ca nobody "/O=Kafka Secured Test/OU=clients/CN=nobody" client "$now_minus_hour" "$later"
    _issue ca expired "/O=Kafka Secured Test/OU=clients/CN=console" client "$past_start" "$past_end"
    _issue other-ca other "/O=Kafka Secured Test/OU=clients/CN=console" client "$now_minus_hour" "$later"
    cat "$PKI/broker.key" "$PKI/broker.pem" "$PKI/ca.pem" > "$PKI/broker-keystore.pem"
    echo "$P12_PASS" > "$PKI/console.p12.pass"
    openssl pkcs12 -export -in "$PKI/console.pem" -inkey "$PKI/console.key" -certfile "$PKI/ca.pem" \
      -name console -out "$PKI/console.p12" -passout "pass:$P12_PASS"
    openssl pkcs8 -topk8 -v2 aes-256-cbc -in "$PKI/console.key" -out "$PKI/console-encrypted.key" \
      -passout "pass:$P12_PASS"
    # console-keystore.pem: key + chain, for Kafka's Java tools (ssl.keystore.type=PEM)
    for c in console nobody expired other; do cat "$PKI/$c.key" "$PKI/$c.pem" > "$PKI/$c-keystore.pem"; done
  )
  # the CA certificates are public
  chmod 644 "$PKI/ca.pem" "$PKI/other-ca.pem"
  openssl verify -CAfile "$PKI/ca.pem" "$PKI/broker.pem" "$PKI/console.pem" >/dev/null
}
