/*
 * spop.h: SPOP, the Stream Processing Offload Protocol that HAProxy's SPOE
 * filter speaks to an agent (HAProxy's doc/SPOE.txt, section 3, version
 * 2.0 of the protocol as HAProxy 2.6 implements it), decoded and encoded
 * over byte buffers.
 *
 * Pure functions: no I/O, no allocation, no global state; every decoder
 * takes [p, end) and never reads outside it, and every decoded string is
 * a slice of the input (nothing is copied). serve/srv_spoa.c drives them
 * on a connection; fuzz/fuzz_spop.c and tests/serve/test_spop.c drive
 * them alone.
 *
 * On the wire: each frame is <LENGTH:4 bytes, big-endian> <FRAME>, and
 *   FRAME    = <TYPE:1> <FLAGS:4, big-endian> <STREAM-ID:varint> <FRAME-ID:varint> <PAYLOAD>
 *   KV-LIST  = (<NAME:string> <VALUE:typed data>)*            (HELLO, DISCONNECT)
 *   MESSAGES = (<NAME:string> <NB-ARGS:1> KV-LIST of NB-ARGS)* (NOTIFY)
 *   ACTIONS  = (<ACTION:1> <NB-ARGS:1> <ARG:typed data>...)*   (ACK)
 *   string   = <LENGTH:varint> <BYTES>
 * LENGTH counts the bytes of FRAME, not its own 4.
 */
#ifndef CLI_SPOP_H
#define CLI_SPOP_H

#include <stddef.h>
#include <stdint.h>

/* Frame types (SPOE.txt 3.2.2). */
enum spop_frame_type {
    SPOP_UNSET = 0, /* the second and later fragments of a payload */
    SPOP_HAPROXY_HELLO = 1,
    SPOP_HAPROXY_DISCONNECT = 2,
    SPOP_NOTIFY = 3,
    SPOP_AGENT_HELLO = 101,
    SPOP_AGENT_DISCONNECT = 102,
    SPOP_ACK = 103
};

/* Frame flags (bit 0 is the least significant of the 4 bytes). */
#define SPOP_FL_FIN 0x1u   /* the last (or only) fragment */
#define SPOP_FL_ABORT 0x2u /* a fragmented payload given up */

/* The status codes of DISCONNECT frames (SPOE.txt 3.5). */
enum spop_status {
    SPOP_ST_NORMAL = 0,
    SPOP_ST_IO = 1,
    SPOP_ST_TIMEOUT = 2,
    SPOP_ST_TOO_BIG = 3,
    SPOP_ST_INVALID = 4,
    SPOP_ST_NO_VERSION = 5,
    SPOP_ST_NO_FRAME_SIZE = 6,
    SPOP_ST_NO_CAPABILITIES = 7,
    SPOP_ST_BAD_VERSION = 8,
    SPOP_ST_BAD_FRAME_SIZE = 9,
    SPOP_ST_NO_FRAGMENTATION = 10,
    SPOP_ST_INTERLACED = 11,
    SPOP_ST_FRAME_ID = 12,
    SPOP_ST_RESOURCE = 13,
    SPOP_ST_UNKNOWN = 99
};

/* HAProxy's text for a status code ("invalid frame received"); "an
 * unknown error occurred" for a code it does not define. */
const char *spop_status_text(unsigned status);

/* Typed data (SPOE.txt 3.1): the low 4 bits of the first byte. */
enum spop_type {
    SPOP_T_NULL = 0,
    SPOP_T_BOOL = 1,
    SPOP_T_INT32 = 2,
    SPOP_T_UINT32 = 3,
    SPOP_T_INT64 = 4,
    SPOP_T_UINT64 = 5,
    SPOP_T_IPV4 = 6,
    SPOP_T_IPV6 = 7,
    SPOP_T_STR = 8,
    SPOP_T_BIN = 9
};

/* The smallest max-frame-size either side may announce. */
#define SPOP_MIN_FRAME 256u
/* The longest varint spop_varint_put writes (a 64-bit value). */
#define SPOP_VARINT_MAX 10

/* ------------------------------------------------------------------------ */
/* Values. */

/* A decoded typed value. Integers are in `u` as sent (a negative INT32 or
 * INT64 as its two's complement); IPV4 and IPV6 point `ptr` at their 4 or
 * 16 bytes (network order) with `len` 4 or 16; STR and BIN at their bytes. */
typedef struct spop_value {
    unsigned type;
    int boolean;
    uint64_t u;
    const uint8_t *ptr;
    size_t len;
} spop_value;

/* HAProxy's varint ("Peers encoding": 0..239 in one byte; else the low 4
 * bits in a byte >= 240 and 7 bits per byte after it, each but the last
 * >= 128). Advances *p past it; returns 0, or -1 when it is truncated or
 * longer than SPOP_VARINT_MAX bytes. A value past 64 bits wraps. */
int spop_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out);
/* Writes v at out (room for SPOP_VARINT_MAX bytes); returns the length. */
size_t spop_varint_put(uint8_t *out, uint64_t v);

/* A string (varint length, then the bytes) as a slice of the input.
 * Returns 0, or -1 when truncated. */
int spop_string_get(const uint8_t **p, const uint8_t *end, const uint8_t **s, size_t *len);

/* One typed value. Returns 0, or -1 when truncated or of a reserved type
 * (10-15: its length cannot be known, so nothing after it can be read). */
int spop_value_get(const uint8_t **p, const uint8_t *end, spop_value *v);

/* ------------------------------------------------------------------------ */
/* Frames. */

typedef struct spop_frame {
    unsigned type;
    uint32_t flags;
    uint64_t stream_id, frame_id;
    const uint8_t *payload;
    size_t payload_len;
} spop_frame;

/* Whether buf holds a whole frame: returns 1 and sets *frame_len (the
 * length field's value: the frame after its 4 length bytes), 0 when more
 * bytes are needed, or -1 when the length is over max_frame
 * (SPOP_ST_TOO_BIG). */
int spop_frame_split(const uint8_t *buf, size_t len, uint32_t max_frame, size_t *frame_len);

/* The frame's type, flags and ids (frame: after the length bytes).
 * Returns 0, or SPOP_ST_INVALID when the metadata is truncated. */
unsigned spop_frame_parse(const uint8_t *frame, size_t len, spop_frame *f);

/* ------------------------------------------------------------------------ */
/* HAPROXY-HELLO (SPOE.txt 3.2.4). */

typedef struct spop_hello {
    uint64_t max_frame;  /* HAProxy's max-frame-size */
    int version_2;       /* supported-versions lists a 2.x */
    int pipelining, async, fragmentation; /* capabilities */
    int healthcheck;
    const uint8_t *engine_id; /* NULL when absent */
    size_t engine_id_len;
} spop_hello;

/* Reads a HAPROXY-HELLO payload (a KV-LIST; unknown items are skipped).
 * Returns 0, or the status to disconnect with: SPOP_ST_INVALID
 * (malformed, or an item of the wrong type), SPOP_ST_NO_VERSION,
 * SPOP_ST_NO_FRAME_SIZE, SPOP_ST_NO_CAPABILITIES (a mandatory item
 * missing), SPOP_ST_BAD_VERSION (no 2.x listed), SPOP_ST_BAD_FRAME_SIZE
 * (under SPOP_MIN_FRAME). */
unsigned spop_hello_parse(const uint8_t *payload, size_t len, spop_hello *h);

/* A KV-LIST's next item: returns 1, 0 at its end, -1 when malformed. */
typedef struct spop_kv {
    const uint8_t *p, *end;
} spop_kv;
int spop_kv_next(spop_kv *it, const uint8_t **name, size_t *name_len, spop_value *v);

/* ------------------------------------------------------------------------ */
/* NOTIFY (SPOE.txt 3.2.6): every argument of every message, in order. */

typedef struct spop_arg {
    const uint8_t *msg; /* the message's name */
    size_t msg_len;
    const uint8_t *name; /* the argument's name; empty when unnamed */
    size_t name_len;
    spop_value value;
} spop_arg;

typedef struct spop_args {
    const uint8_t *p, *end;
    const uint8_t *msg;
    size_t msg_len;
    unsigned left; /* arguments left in the current message */
} spop_args;

void spop_args_init(spop_args *it, const uint8_t *payload, size_t len);
/* Returns 1 with the next argument in *a, 0 at the end, -1 when the
 * payload is malformed (the frame is then invalid). */
int spop_args_next(spop_args *it, spop_arg *a);

/* ------------------------------------------------------------------------ */
/* Request headers as HAProxy sends them. */

/* req.hdrs_bin (HAProxy's configuration manual): (<name:string>
 * <value:string>)* then an empty name and an empty value. Returns 1 with
 * the next header, 0 at the end marker, -1 when malformed (truncated, no
 * end marker, or an empty name with a value). Nothing after the end
 * marker is read. */
typedef struct spop_hdrs {
    const uint8_t *p, *end;
} spop_hdrs;
int spop_hdrs_bin_next(spop_hdrs *it, const uint8_t **name, size_t *name_len,
                       const uint8_t **value, size_t *value_len);

/* req.hdrs: "name: value\r\n" lines, then an empty line ("\r\n"). The
 * value is trimmed of spaces and tabs. Returns 1, 0 at the empty line, -1
 * when malformed (no colon, an empty name, a line without CRLF, or no
 * empty line: HAProxy's way of telling a truncated block). */
int spop_hdrs_text_next(spop_hdrs *it, const uint8_t **name, size_t *name_len,
                        const uint8_t **value, size_t *value_len);

/* ------------------------------------------------------------------------ */
/* Frames an agent sends. Each writer puts one whole frame, its 4 length
 * bytes first, at out (cap bytes) and returns its length in bytes, or 0
 * when it does not fit in cap. */

/* AGENT-HELLO: version "2.0", max_frame, and `capabilities` (a
 * comma-separated list). */
size_t spop_put_agent_hello(uint8_t *out, size_t cap, uint32_t max_frame,
                            const char *capabilities);

/* AGENT-DISCONNECT with a status code and its message. */
size_t spop_put_disconnect(uint8_t *out, size_t cap, unsigned status, const char *message);

/* Variable scopes of set-var (SPOE.txt 3.4). */
enum spop_scope {
    SPOP_SCOPE_PROC = 0,
    SPOP_SCOPE_SESS = 1,
    SPOP_SCOPE_TXN = 2,
    SPOP_SCOPE_REQ = 3,
    SPOP_SCOPE_RES = 4
};

/* A set-var action with a string value. */
typedef struct spop_setvar {
    unsigned scope;
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} spop_setvar;

/* ACK for (stream_id, frame_id) with n set-var actions (n may be 0).
 * Action 1 is set-var (SPOE.txt 3.4). */
size_t spop_put_ack(uint8_t *out, size_t cap, uint64_t stream_id, uint64_t frame_id,
                    const spop_setvar *vars, size_t n);

#endif /* CLI_SPOP_H */
