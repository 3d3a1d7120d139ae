/*
 * console.kafka._metadata: a Metadata response (ApiKey 3, versions 9-13) decoded in one pass from
 * its bytes straight into the console's packed form.
 *
 * decode_metadata(data, version) -> (throttle_ms, cluster_id, controller_id, brokers, topics, error_code,
 *                                    counts)
 *
 *   data     the response body after the response header, any contiguous bytes-like object
 *   brokers  [(node_id, host, port, rack or None)]
 *   topics   [(name or None, error_code, is_internal, packed, partitions, replication_factor,
 *              under_replicated, offline)] in the response's order, where packed is the bytes
 *              marshal.dumps([(partition_id, leader_id, [replicas], [isr]), ...], 2) would give
 *              (read back with marshal.loads), partitions their count, replication_factor the
 *              replica count of the lowest partition id (0 without partitions), under_replicated
 *              the partitions whose ISR is smaller than their replicas, offline those without a
 *              leader (leader_id < 0)
 *   error_code  the top-level error (version 13+; 0 before)
 *   counts   [(broker_id, replicas, leaders, under_replicated, out_of_isr, offline)] sorted by id, one
 *            per id named as a replica or a leader (leader_id >= 0) by a partition of a topic with a
 *            name: replicas the partitions with a replica on it (a replica listed twice counts
 *            twice), leaders the partitions it leads, under_replicated the partitions it hosts
 *            whose ISR is smaller than their replicas, out_of_isr its replicas of those partitions
 *            that are not in their ISR, offline the partitions it hosts without a leader
 *
 * Versions 9+ are Kafka's "flexible" versions: arrays and strings are prefixed with an unsigned
 * varint N + 1 (0 meaning null) and every structure ends with a section of tagged fields, all of
 * which are skipped by their sizes (Metadata defines none in these versions). Fields, per version
 * (clients/src/main/resources/common/message/MetadataResponse.json):
 *
 *   throttle_time_ms int32
 *   brokers [node_id int32, host string, port int32, rack nullable string, tags]
 *   cluster_id nullable string
 *   controller_id int32
 *   topics [error_code int16, name string (nullable 12+), topic_id uuid (10+), is_internal bool,
 *           partitions [error_code int16, partition_index int32, leader_id int32,
 *                       leader_epoch int32, replica_nodes [int32], isr_nodes [int32],
 *                       offline_replicas [int32], tags],
 *           topic_authorized_operations int32, tags]
 *   cluster_authorized_operations int32 (9-10 only)
 *   error_code int16 (13+)
 *   tags
 *
 * Every read is checked against the end of the buffer; a truncated or malformed answer (a null
 * where the schema allows none, a length beyond the bytes left, a varint over 32 bits, invalid
 * UTF-8, bytes left over after the last field) raises
 * ValueError("malformed Metadata response: <what> at byte <offset of the field>").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MIN_VERSION 9
#define MAX_VERSION 13

/* marshal's type codes (Python/marshal.c), format version 2: no reference flags */
#define M_INT 'i'
#define M_LIST '['
#define M_TUPLE '('

/* the fewest bytes one array element can take, to refuse a count the buffer cannot hold */
#define MIN_BROKER 11   /* node_id, host "", port, rack null, tags */
#define MIN_PARTITION 18 /* error, index, leader, epoch, three empty arrays, tags */
#define MIN_TOPIC 10    /* error, name "", is_internal, partitions [], operations, tags (+16 uuid) */

typedef struct {
    const unsigned char *buf;
    Py_ssize_t len;   /* the bytes at hand */
    Py_ssize_t pos;
    Py_ssize_t limit; /* where the answer ends: len, or beyond it while a Stream waits for the rest */
    int short_read;   /* the last error was the bytes at hand running out before the answer's end */
} Reader;

/* One growable buffer, reused for every topic's packed partitions. */
typedef struct {
    unsigned char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Packer;

static int
malformed(Py_ssize_t at, const char *what)
{
    PyErr_Format(PyExc_ValueError, "malformed Metadata response: %s at byte %zd", what, at);
    return -1;
}

/* The bytes at hand end before the field does: malformed, and marked short when more of the
 * answer is still to come (a Stream then waits for it and reads the topic again). */
static int
out_of_bytes(Reader *r, Py_ssize_t at, const char *what)
{
    r->short_read = r->len < r->limit;
    return malformed(at, what);
}

static inline int
need(Reader *r, Py_ssize_t n, const char *what)
{
    if (n < 0) {
        return malformed(r->pos, what);
    }
    if (r->len - r->pos < n) {
        return out_of_bytes(r, r->pos, what);
    }
    return 0;
}

static inline int32_t
get_i32(const unsigned char *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3]);
}

static inline int
read_i32(Reader *r, int32_t *out, const char *what)
{
    if (r->len - r->pos < 4) {
        return out_of_bytes(r, r->pos, what);
    }
    *out = get_i32(r->buf + r->pos);
    r->pos += 4;
    return 0;
}

static inline int
read_i16(Reader *r, int *out, const char *what)
{
    if (r->len - r->pos < 2) {
        return out_of_bytes(r, r->pos, what);
    }
    *out = (int16_t)(((unsigned)r->buf[r->pos] << 8) | r->buf[r->pos + 1]);
    r->pos += 2;
    return 0;
}

static inline int
skip(Reader *r, Py_ssize_t n, const char *what)
{
    if (need(r, n, what) < 0) {
        return -1;
    }
    r->pos += n;
    return 0;
}

/* An unsigned varint of at most 32 bits (at most 5 bytes, the fifth holding 4 bits). */
static inline int
read_uvarint(Reader *r, uint32_t *out, const char *what)
{
    Py_ssize_t start = r->pos;
    if (r->pos < r->len && r->buf[r->pos] < 0x80) { /* the common one-byte case */
        *out = r->buf[r->pos++];
        return 0;
    }
    uint32_t value = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
        if (r->pos >= r->len) {
            r->pos = start;
            return out_of_bytes(r, start, what);
        }
        unsigned b = r->buf[r->pos++];
        if (shift == 28 && b > 0x0f) {
            r->pos = start;
            return malformed(start, "varint over 32 bits");
        }
        value |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = value;
            return 0;
        }
    }
    return malformed(start, "varint over 32 bits"); /* not reached: shift 28 stops above */
}

/* A compact array's length: N + 1, where 0 (null) is refused as no array here is nullable, and
 * a count that could not fit in the bytes left at min_size bytes per element is refused too. */
static int
read_count(Reader *r, Py_ssize_t min_size, Py_ssize_t *count, const char *null_what, const char *long_what)
{
    Py_ssize_t start = r->pos;
    uint32_t n;
    if (read_uvarint(r, &n, null_what) < 0) {
        return -1;
    }
    if (n == 0) {
        return malformed(start, null_what);
    }
    if ((uint64_t)(n - 1) > (uint64_t)((r->limit - r->pos) / min_size)) { /* the answer's end, not the bytes at hand */
        return malformed(start, long_what);
    }
    *count = (Py_ssize_t)(n - 1);
    return 0;
}

/* A compact string as a new reference: str, or None when nullable and null. */
static PyObject *
read_string(Reader *r, int nullable, const char *what, const char *null_what)
{
    Py_ssize_t start = r->pos;
    uint32_t n;
    if (read_uvarint(r, &n, what) < 0) {
        return NULL;
    }
    if (n == 0) {
        if (nullable) {
            Py_RETURN_NONE;
        }
        malformed(start, null_what);
        return NULL;
    }
    if ((uint64_t)(n - 1) > (uint64_t)(r->limit - r->pos)) {
        malformed(start, what);
        return NULL;
    }
    Py_ssize_t size = (Py_ssize_t)(n - 1);
    if (size > r->len - r->pos) {
        out_of_bytes(r, start, what);
        return NULL;
    }
    PyObject *s = PyUnicode_DecodeUTF8((const char *)r->buf + r->pos, size, "strict");
    if (s == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            return NULL; /* out of memory */
        }
        PyErr_Clear();
        malformed(start, "invalid UTF-8 in a string");
        return NULL;
    }
    r->pos += size;
    return s;
}

/* A section of tagged fields, each skipped by its size. */
static int
skip_tags(Reader *r)
{
    uint32_t n, tag, size;
    if (read_uvarint(r, &n, "truncated tagged fields") < 0) {
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (read_uvarint(r, &tag, "truncated tagged field") < 0 ||
            read_uvarint(r, &size, "truncated tagged field") < 0) {
            return -1;
        }
        if ((uint64_t)size > (uint64_t)(r->limit - r->pos)) {
            return malformed(r->pos, "tagged field longer than the bytes left");
        }
        if (skip(r, (Py_ssize_t)size, "truncated tagged field") < 0) {
            return -1;
        }
    }
    return 0;
}

/* Counts per broker id: an open-addressing table (linear probing, at most half full). */
enum { C_REPLICAS, C_LEADERS, C_UNDER, C_OUT, C_OFFLINE, C_FIELDS };

typedef struct {
    int32_t id;
    int used;
    long long c[C_FIELDS];
} Slot;

typedef struct {
    Slot *slots;
    size_t cap; /* a power of two, or 0 before the first id */
    size_t used;
} Table;

static inline size_t
slot_of(const Table *t, int32_t id)
{
    size_t i = ((uint32_t)id * 2654435761u) & (t->cap - 1);
    while (t->slots[i].used && t->slots[i].id != id) {
        i = (i + 1) & (t->cap - 1);
    }
    return i;
}

/* The slot of id (made when new), or NULL when out of memory (the error set). */
static Slot *
counted(Table *t, int32_t id)
{
    if (t->cap) {
        Slot *s = &t->slots[slot_of(t, id)];
        if (s->used) {
            return s;
        }
    }
    if (2 * (t->used + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        Slot *old = t->slots, *slots = PyMem_Calloc(cap, sizeof(Slot));
        if (slots == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        size_t old_cap = t->cap;
        t->slots = slots;
        t->cap = cap;
        for (size_t i = 0; i < old_cap; i++) {
            if (old[i].used) {
                slots[slot_of(t, old[i].id)] = old[i];
            }
        }
        PyMem_Free(old);
    }
    Slot *s = &t->slots[slot_of(t, id)];
    s->used = 1;
    s->id = id;
    t->used++;
    return s;
}

static int
by_id(const void *a, const void *b)
{
    int32_t x = ((const Slot *)a)->id, y = ((const Slot *)b)->id;
    return (x > y) - (x < y);
}

/* The table as [(id, replicas, leaders, under, out_of_isr, offline)] sorted by id. */
static PyObject *
counts_list(Table *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].used) {
            t->slots[n++] = t->slots[i];
        }
    }
    if (n) {
        qsort(t->slots, n, sizeof(Slot), by_id);
    }
    PyObject *out = PyList_New((Py_ssize_t)n);
    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const Slot *s = &t->slots[i];
        PyObject *row = Py_BuildValue("(iLLLLL)", s->id, s->c[C_REPLICAS], s->c[C_LEADERS], s->c[C_UNDER],
                                      s->c[C_OUT], s->c[C_OFFLINE]);
        if (row == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, row);
    }
    return out;
}

/* One partition's counts: ids point at its replica and ISR arrays (big-endian int32, checked). */
static int
count_partition(Table *t, int32_t leader, const unsigned char *replicas, Py_ssize_t n_replicas,
                const unsigned char *isr, Py_ssize_t n_isr)
{
    int under = n_isr < n_replicas;
    for (Py_ssize_t i = 0; i < n_replicas; i++) {
        int32_t id = get_i32(replicas + 4 * i);
        Slot *s = counted(t, id);
        if (s == NULL) {
            return -1;
        }
        s->c[C_REPLICAS]++;
        if (leader < 0) {
            s->c[C_OFFLINE]++;
        }
        if (under) {
            s->c[C_UNDER]++;
            int in_isr = 0;
            for (Py_ssize_t j = 0; j < n_isr && !in_isr; j++) {
                in_isr = get_i32(isr + 4 * j) == id;
            }
            s->c[C_OUT] += !in_isr;
        }
    }
    if (leader >= 0) {
        Slot *s = counted(t, leader);
        if (s == NULL) {
            return -1;
        }
        s->c[C_LEADERS]++;
    }
    return 0;
}

static int
reserve(Packer *pk, Py_ssize_t more)
{
    if (pk->cap - pk->len >= more) {
        return 0;
    }
    Py_ssize_t cap = pk->cap ? pk->cap : 4096;
    while (cap - pk->len < more) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    unsigned char *data = PyMem_Realloc(pk->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    pk->data = data;
    pk->cap = cap;
    return 0;
}

static inline void
put_i32le(unsigned char *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (unsigned char)u;
    p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16);
    p[3] = (unsigned char)(u >> 24);
}

/* An array of int32 (node ids) copied into the packer as marshal's list of ints; the count and
 * where the ids start in the buffer out (their 4 * count bytes are checked to be there). */
static int
pack_ids(Reader *r, Packer *pk, Py_ssize_t *count, const unsigned char **ids, const char *null_what,
         const char *long_what)
{
    Py_ssize_t n;
    if (read_count(r, 4, &n, null_what, long_what) < 0 || need(r, 4 * n, long_what) < 0 || reserve(pk, 5 + 5 * n) < 0) {
        return -1;
    }
    unsigned char *out = pk->data + pk->len;
    const unsigned char *in = r->buf + r->pos;
    *out++ = M_LIST;
    put_i32le(out, (int32_t)n);
    out += 4;
    for (Py_ssize_t i = 0; i < n; i++, in += 4, out += 5) {
        out[0] = M_INT;
        put_i32le(out + 1, get_i32(in));
    }
    pk->len = out - pk->data;
    *ids = r->buf + r->pos;
    r->pos += 4 * n;
    *count = n;
    return 0;
}

static PyObject *
read_brokers(Reader *r)
{
    Py_ssize_t n;
    if (read_count(r, MIN_BROKER, &n, "null or truncated broker array", "broker count beyond the bytes left") < 0) {
        return NULL;
    }
    PyObject *brokers = PyList_New(n);
    if (brokers == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t node, port;
        PyObject *host = NULL, *rack = NULL, *b;
        if (read_i32(r, &node, "truncated broker") < 0 ||
            (host = read_string(r, 0, "truncated broker host", "null broker host")) == NULL) {
            goto fail;
        }
        if (read_i32(r, &port, "truncated broker") < 0 ||
            (rack = read_string(r, 1, "truncated broker rack", "")) == NULL || skip_tags(r) < 0) {
            Py_DECREF(host);
            Py_XDECREF(rack);
            goto fail;
        }
        b = Py_BuildValue("(iNiN)", node, host, port, rack); /* N: the tuple takes both */
        if (b == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(brokers, i, b);
    }
    return brokers;
fail:
    Py_DECREF(brokers);
    return NULL;
}

/* One topic's tuple; the packer is reused (emptied here); a named topic's partitions counted. */
static PyObject *
read_topic(Reader *r, int version, Packer *pk, Table *counts)
{
    int error, partition_error;
    PyObject *name, *packed, *t;
    if (read_i16(r, &error, "truncated topic") < 0 ||
        (name = read_string(r, version >= 12, "truncated topic name", "null topic name before version 12")) == NULL) {
        return NULL;
    }
    Py_ssize_t n, replicas, isr, offline_replicas;
    unsigned char internal = 0;
    if ((version >= 10 && skip(r, 16, "truncated topic id") < 0) || need(r, 1, "truncated topic") < 0) {
        goto fail;
    }
    internal = r->buf[r->pos++];
    if (read_count(r, MIN_PARTITION, &n, "null or truncated partition array", "partition count beyond the bytes left") <
        0) {
        goto fail;
    }
    pk->len = 0;
    if (reserve(pk, 5) < 0) {
        goto fail;
    }
    pk->data[0] = M_LIST;
    put_i32le(pk->data + 1, (int32_t)n);
    pk->len = 5;

    long rf = 0, under = 0, offline = 0;
    int32_t lowest = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t index, leader, epoch;
        if (read_i16(r, &partition_error, "truncated partition") < 0 || read_i32(r, &index, "truncated partition") < 0 ||
            read_i32(r, &leader, "truncated partition") < 0 || read_i32(r, &epoch, "truncated partition") < 0 ||
            reserve(pk, 15) < 0) {
            goto fail;
        }
        unsigned char *out = pk->data + pk->len;
        out[0] = M_TUPLE;
        put_i32le(out + 1, 4);
        out[5] = M_INT;
        put_i32le(out + 6, index);
        out[10] = M_INT;
        put_i32le(out + 11, leader);
        pk->len += 15;
        const unsigned char *replica_ids, *isr_ids;
        if (pack_ids(r, pk, &replicas, &replica_ids, "null or truncated replica array",
                     "replica count beyond the bytes left") < 0 ||
            pack_ids(r, pk, &isr, &isr_ids, "null or truncated ISR array", "ISR count beyond the bytes left") < 0 ||
            read_count(r, 4, &offline_replicas, "null or truncated offline replica array",
                       "offline replica count beyond the bytes left") < 0) {
            goto fail;
        }
        if (skip(r, 4 * offline_replicas, "offline replica count beyond the bytes left") < 0 || skip_tags(r) < 0 ||
            (name != Py_None && count_partition(counts, leader, replica_ids, replicas, isr_ids, isr) < 0)) {
            goto fail;
        }
        if (i == 0 || index < lowest) {
            lowest = index;
            rf = (long)replicas;
        }
        under += isr < replicas;
        offline += leader < 0;
    }
    if (skip(r, 4, "truncated topic") < 0 || skip_tags(r) < 0) { /* topic_authorized_operations */
        goto fail;
    }
    packed = PyBytes_FromStringAndSize((const char *)pk->data, pk->len);
    if (packed == NULL) {
        goto fail;
    }
    /* N: the tuple takes name and packed (and releases them if it cannot be built) */
    t = Py_BuildValue("(NiONnlll)", name, error, internal ? Py_True : Py_False, packed, n, rf, under, offline);
    return t;
fail:
    Py_DECREF(name);
    return NULL;
}

/* A compact string skipped (not decoded). */
static int
skip_string(Reader *r, int nullable, const char *what)
{
    Py_ssize_t start = r->pos;
    uint32_t n;
    if (read_uvarint(r, &n, what) < 0) {
        return -1;
    }
    if (n == 0) {
        return nullable ? 0 : malformed(start, what);
    }
    return skip(r, (Py_ssize_t)(n - 1), what);
}

/* One topic passed over by its lengths only: a Stream's test that the whole topic is at hand
 * before read_topic packs it and counts its partitions (which cannot be taken back). */
static int
skip_topic(Reader *r, int version)
{
    Py_ssize_t n, ids;
    if (skip(r, 2, "truncated topic") < 0 || skip_string(r, version >= 12, "truncated topic name") < 0 ||
        skip(r, version >= 10 ? 17 : 1, "truncated topic") < 0 ||
        read_count(r, MIN_PARTITION, &n, "null or truncated partition array", "partition count beyond the bytes left") < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (skip(r, 14, "truncated partition") < 0) {
            return -1;
        }
        for (int a = 0; a < 3; a++) { /* replicas, ISR, offline replicas */
            if (read_count(r, 4, &ids, "null or truncated replica array", "replica count beyond the bytes left") < 0 ||
                skip(r, 4 * ids, "replica count beyond the bytes left") < 0) {
                return -1;
            }
        }
        if (skip_tags(r) < 0) {
            return -1;
        }
    }
    return skip(r, 4, "truncated topic") < 0 ? -1 : skip_tags(r);
}

static PyObject *
read_topics(Reader *r, int version, Packer *pk, Table *counts)
{
    Py_ssize_t n;
    if (read_count(r, version >= 10 ? MIN_TOPIC + 16 : MIN_TOPIC, &n, "null or truncated topic array",
                   "topic count beyond the bytes left") < 0) {
        return NULL;
    }
    PyObject *topics = PyList_New(n);
    if (topics == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = read_topic(r, version, pk, counts);
        if (t == NULL) {
            Py_DECREF(topics);
            return NULL;
        }
        PyList_SET_ITEM(topics, i, t);
    }
    return topics;
}

static PyObject *
decode(Reader *r, int version)
{
    int32_t throttle, controller;
    int error = 0;
    PyObject *brokers = NULL, *cluster_id = NULL, *topics = NULL, *counted_list = NULL;
    Packer pk = {NULL, 0, 0};
    Table counts = {NULL, 0, 0};

    if (read_i32(r, &throttle, "truncated throttle time") < 0 || (brokers = read_brokers(r)) == NULL ||
        (cluster_id = read_string(r, 1, "truncated cluster id", "")) == NULL ||
        read_i32(r, &controller, "truncated controller id") < 0 || (topics = read_topics(r, version, &pk, &counts)) == NULL) {
        goto fail;
    }
    if ((version <= 10 && skip(r, 4, "truncated cluster authorized operations") < 0) ||
        (version >= 13 && read_i16(r, &error, "truncated error code") < 0) || skip_tags(r) < 0) {
        goto fail;
    }
    if (r->pos != r->len) {
        malformed(r->pos, "bytes after the last field");
        goto fail;
    }
    if ((counted_list = counts_list(&counts)) == NULL) {
        goto fail;
    }
    PyMem_Free(pk.data);
    PyMem_Free(counts.slots);
    /* N: the tuple takes the objects (and releases them if it cannot be built) */
    return Py_BuildValue("(iNiNNiN)", throttle, cluster_id, controller, brokers, topics, error, counted_list);
fail:
    PyMem_Free(pk.data);
    PyMem_Free(counts.slots);
    Py_XDECREF(brokers);
    Py_XDECREF(cluster_id);
    Py_XDECREF(topics);
    return NULL;
}

PyDoc_STRVAR(decode_metadata_doc,
             "decode_metadata($module, data, version, /)\n--\n\n"
             "A Metadata response body (after the response header, versions 9-13) decoded into\n"
             "(throttle_ms, cluster_id, controller_id, brokers, topics, error_code, counts).\n\n"
             "brokers: [(node_id, host, port, rack or None)];\n"
             "topics: [(name or None, error_code, is_internal, packed, partitions, replication_factor,\n"
             "under_replicated, offline)], packed being marshal.dumps([(partition_id, leader_id,\n"
             "[replicas], [isr]), ...], 2) in the response's order;\n"
             "counts: [(broker_id, replicas, leaders, under_replicated, out_of_isr, offline)] by id,\n"
             "over the partitions of the named topics. Raises ValueError on a version\n"
             "outside 9-13 or a truncated or malformed answer.");

static PyObject *
decode_metadata(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "decode_metadata() takes 2 positional arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "decode_metadata(): version must be an int");
        return NULL;
    }
    int overflow;
    long version = PyLong_AsLongAndOverflow(args[1], &overflow);
    if (version == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (overflow || version < MIN_VERSION || version > MAX_VERSION) {
        PyErr_Format(PyExc_ValueError, "Metadata response version %S is not one of 9-13", args[1]);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    Reader r = {(const unsigned char *)view.buf, view.len, 0, view.len, 0};
    PyObject *result = decode(&r, (int)version);
    PyBuffer_Release(&view);
    return result;
}


/* ---- Stream: the answer decoded while it arrives ------------------------------------------- */

enum { S_HEADER, S_PREFIX, S_TOPICS, S_SUFFIX, S_DONE, S_FAILED };

typedef struct {
    PyObject_HEAD
    int version;
    int phase;
    Py_ssize_t left; /* the frame's bytes not consumed yet */
    int32_t correlation_id, throttle, controller;
    int error;
    PyObject *brokers, *cluster_id, *topics, *result;
    Py_ssize_t n_topics, done_topics;
    Packer pk;
    Table counts;
} Stream;

static void
stream_clear(Stream *st)
{
    Py_CLEAR(st->brokers);
    Py_CLEAR(st->cluster_id);
    Py_CLEAR(st->topics);
    PyMem_Free(st->pk.data);
    st->pk = (Packer){NULL, 0, 0};
    PyMem_Free(st->counts.slots);
    st->counts = (Table){NULL, 0, 0};
}

static void
stream_dealloc(Stream *st)
{
    stream_clear(st);
    Py_CLEAR(st->result);
    Py_TYPE(st)->tp_free((PyObject *)st);
}

static PyObject *
stream_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    int version;
    Py_ssize_t size;
    static char *kwlist[] = {"version", "size", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "in:Stream", kwlist, &version, &size)) {
        return NULL;
    }
    if (version < MIN_VERSION || version > MAX_VERSION) {
        PyErr_Format(PyExc_ValueError, "Metadata response version %d is not one of 9-13", version);
        return NULL;
    }
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "a frame's size cannot be negative");
        return NULL;
    }
    Stream *st = (Stream *)type->tp_alloc(type, 0);
    if (st == NULL) {
        return NULL;
    }
    st->version = version;
    st->left = size;
    st->correlation_id = -1;
    return (PyObject *)st;
}

/* One phase's fields, all or none: 1 read, 0 short (more bytes needed), -1 error. */
static int
stream_prefix(Stream *st, Reader *r)
{
    int32_t throttle, controller;
    PyObject *brokers = NULL, *cluster_id = NULL, *topics = NULL;
    Py_ssize_t n;
    if (read_i32(r, &throttle, "truncated throttle time") < 0 || (brokers = read_brokers(r)) == NULL ||
        (cluster_id = read_string(r, 1, "truncated cluster id", "")) == NULL ||
        read_i32(r, &controller, "truncated controller id") < 0 ||
        read_count(r, st->version >= 10 ? MIN_TOPIC + 16 : MIN_TOPIC, &n, "null or truncated topic array",
                   "topic count beyond the bytes left") < 0 ||
        (topics = PyList_New(n)) == NULL) {
        Py_XDECREF(brokers);
        Py_XDECREF(cluster_id);
        return -1;
    }
    st->throttle = throttle;
    st->controller = controller;
    st->brokers = brokers;
    st->cluster_id = cluster_id;
    st->topics = topics;
    st->n_topics = n;
    return 1;
}

static int
stream_suffix(Stream *st, Reader *r)
{
    int error = 0;
    if ((st->version <= 10 && skip(r, 4, "truncated cluster authorized operations") < 0) ||
        (st->version >= 13 && read_i16(r, &error, "truncated error code") < 0) || skip_tags(r) < 0) {
        return -1;
    }
    if (r->pos != r->limit) {
        return malformed(r->pos, "bytes after the last field");
    }
    PyObject *counted_list = counts_list(&st->counts);
    if (counted_list == NULL) {
        return -1;
    }
    st->result = Py_BuildValue("(iOiOOiN)", st->throttle, st->cluster_id, st->controller, st->brokers, st->topics,
                               error, counted_list);
    return st->result == NULL ? -1 : 1;
}

static int
stream_step(Stream *st, Reader *r)
{
    int32_t correlation_id;
    switch (st->phase) {
    case S_HEADER: /* response header v1: correlation id, tagged fields */
        if (read_i32(r, &correlation_id, "truncated response header") < 0 || skip_tags(r) < 0) {
            return -1;
        }
        st->correlation_id = correlation_id;
        st->phase = S_PREFIX;
        return 1;
    case S_PREFIX:
        if (stream_prefix(st, r) < 0) {
            return -1;
        }
        st->phase = S_TOPICS;
        return 1;
    case S_TOPICS:
        while (st->done_topics < st->n_topics) {
            Py_ssize_t start = r->pos;
            if (skip_topic(r, st->version) < 0) {
                return -1;
            }
            r->pos = start;
            PyObject *t = read_topic(r, st->version, &st->pk, &st->counts);
            if (t == NULL) {
                return -1;
            }
            PyList_SET_ITEM(st->topics, st->done_topics, t);
            st->done_topics++;
            return 1; /* each topic is a step: consumed once read */
        }
        st->phase = S_SUFFIX;
        return 1;
    case S_SUFFIX:
        if (stream_suffix(st, r) < 0) {
            return -1;
        }
        st->phase = S_DONE;
        stream_clear(st);
        return 1;
    default:
        return 0;
    }
}

PyDoc_STRVAR(stream_feed_doc,
             "feed($self, data, /)\n--\n\n"
             "Read what it can of data (the frame's bytes not consumed yet, from the first one, at\n"
             "most the frame's end) and answer how many bytes it consumed: the response header, the\n"
             "fields before the topics, each whole topic, the fields after them. A topic cut by\n"
             "data's end is read again from its start by a later call. Raises ValueError on a\n"
             "malformed answer (and on every call after).");

static PyObject *
stream_feed(Stream *st, PyObject *data)
{
    if (st->phase == S_FAILED) {
        PyErr_SetString(PyExc_ValueError, "malformed Metadata response: read after an error");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (view.len > st->left) {
        PyBuffer_Release(&view);
        st->phase = S_FAILED;
        PyErr_SetString(PyExc_ValueError, "malformed Metadata response: more bytes than its frame");
        return NULL;
    }
    Reader r = {(const unsigned char *)view.buf, view.len, 0, st->left, 0};
    Py_ssize_t consumed = 0;
    for (;;) {
        Py_ssize_t start = r.pos;
        r.short_read = 0;
        int got = stream_step(st, &r);
        if (got > 0) {
            consumed = r.pos;
            continue;
        }
        if (got < 0) {
            if (!r.short_read) {
                PyBuffer_Release(&view);
                stream_clear(st);
                st->phase = S_FAILED;
                return NULL;
            }
            PyErr_Clear(); /* the rest is still to come: this step again then */
            r.pos = start;
        }
        break;
    }
    PyBuffer_Release(&view);
    st->left -= consumed;
    return PyLong_FromSsize_t(consumed);
}

PyDoc_STRVAR(stream_result_doc,
             "result($self, /)\n--\n\n"
             "What decode_metadata answers for the same bytes, once the whole frame was fed;\n"
             "ValueError before.");

static PyObject *
stream_result(Stream *st, PyObject *Py_UNUSED(ignored))
{
    if (st->phase != S_DONE || st->left != 0) {
        PyErr_SetString(PyExc_ValueError, "malformed Metadata response: truncated (the frame ended before the answer)");
        return NULL;
    }
    return Py_NewRef(st->result);
}

static PyObject *
stream_get_correlation_id(Stream *st, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(st->correlation_id);
}

static PyObject *
stream_get_done(Stream *st, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(st->phase == S_DONE);
}

static PyMethodDef stream_methods[] = {
    {"feed", (PyCFunction)stream_feed, METH_O, stream_feed_doc},
    {"result", (PyCFunction)stream_result, METH_NOARGS, stream_result_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"correlation_id", (getter)stream_get_correlation_id, NULL, "the response header's (-1 before it was read)", NULL},
    {"done", (getter)stream_get_done, NULL, "every field read", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(stream_doc,
             "Stream(version, size)\n--\n\n"
             "A Metadata response frame (its size bytes after the length: the response header v1 and\n"
             "the body) decoded while it arrives, topic by topic, into what decode_metadata answers;\n"
             "the caller keeps only the bytes it has not consumed yet.");

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "console.kafka._metadata.Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = stream_doc,
    .tp_methods = stream_methods,
    .tp_getset = stream_getset,
    .tp_new = stream_new,
};

static int
module_exec(PyObject *m)
{
    if (PyType_Ready(&StreamType) < 0) {
        return -1;
    }
    return PyModule_AddObjectRef(m, "Stream", (PyObject *)&StreamType);
}

static PyMethodDef methods[] = {
    {"decode_metadata", (PyCFunction)(void (*)(void))decode_metadata, METH_FASTCALL, decode_metadata_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "console.kafka._metadata",
    .m_doc = "Kafka Metadata responses decoded straight into the console's packed form.",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit__metadata(void)
{
    return PyModuleDef_Init(&module);
}
