/*
 * http_request.h: parse one raw HTTP/1.x request (a whole file's bytes)
 * into the parts libclassify looks at: method, path, query and headers.
 *
 * This is classify-run's reader for hand-written or captured request files,
 * not a server's parser: it takes a complete buffer, parses only the request
 * line and the header section (with llhttp, in HTTP_REQUEST mode) and
 * ignores any body. Being a file format for people, it is lenient in exactly
 * two places, and strict everywhere else:
 *
 *   - bare LF line endings are accepted (each is read as CRLF);
 *   - the blank line that ends the header section may be missing: the end
 *     of the file then ends the headers (and the last line's line ending
 *     may be missing too).
 *
 * What llhttp rejects is rejected, and on top of that: obsolete line
 * folding, whitespace between a header name and its colon, an empty header
 * name, and any version other than HTTP/1.0 or HTTP/1.1 (RFC 9112 lets a
 * server reject each of these; accepting them would let a request file say
 * something no conforming server would hear).
 *
 * No decoding is done: percent-escapes, '+' and '#' stay as they are.
 */
#ifndef CLI_HTTP_REQUEST_H
#define CLI_HTTP_REQUEST_H

#include <stddef.h>

/* A byte slice. Not NUL-terminated; ptr is never NULL (an empty slice
 * points at a static ""). */
typedef struct http_slice {
    const char *ptr;
    size_t len;
} http_slice;

typedef struct http_header {
    http_slice name;  /* as written (case kept), a valid RFC 9110 token */
    http_slice value; /* leading and trailing spaces and tabs removed */
} http_header;

/*
 * A parsed request. Every slice points into `buf` (a private copy of the
 * request line and header section, owned by this struct) or at static
 * storage, so the slices stay valid until http_request_free() even if the
 * caller frees the input.
 */
typedef struct http_request {
    http_slice method;  /* "GET", "POST", ...: what llhttp knows */
    http_slice target;  /* the request target as written */
    http_slice path;    /* see below */
    http_slice query;   /* after the first '?' of the path part; no '?' */
    unsigned version_major, version_minor; /* 1.0 or 1.1 */
    http_header *headers; /* in the order given; repeats are kept */
    size_t header_count;
    size_t header_cap;
    char *buf;            /* owned; see above */
} http_request;

/*
 * How the target becomes path and query:
 *   origin-form    "/a/b?x=1"            path "/a/b", query "x=1"
 *   absolute-form  "http://h:8080/a?x=1" path "/a",   query "x=1"
 *                  "http://h?x=1"        path "/",    query "x=1"
 *                  (scheme "://" authority is dropped; an empty path is
 *                  "/", as RFC 9110 section 4.2.3 says it is equivalent)
 *   authority-form "h:443" (CONNECT)     path "h:443", query ""
 *   asterisk-form  "*" (OPTIONS)         path "*",     query ""
 * Any other target ("*?x", "h:443?x", "h", "a/b") is refused: llhttp lets
 * them through, and they would put a '?' in the path.
 */

typedef enum http_parse_status {
    HTTP_PARSE_OK = 0,
    HTTP_PARSE_MALFORMED = -1, /* the bytes are not a request we accept */
    HTTP_PARSE_NOMEM = -2      /* an allocation failed */
} http_parse_status;

/*
 * Parses the request in data[0..len). `data` need not be NUL-terminated and
 * may contain any bytes. `req` need not be initialized; on return it is
 * either a parsed request (HTTP_PARSE_OK) or empty, and in both cases
 * http_request_free() may be called on it.
 *
 * On failure writes a NUL-terminated message to err (truncated to errlen;
 * err may be NULL when errlen is 0) saying what is wrong and where, as
 * "<problem> at line L, column C (byte offset O)", with lines and columns
 * counted from 1 and columns in bytes, e.g.
 * "invalid header token at line 3, column 5 (byte offset 42)". Positions
 * are in `data` as given (not in the CRLF copy); "(end of file)" replaces
 * the offset when the problem is at the very end. The one message without
 * a position is "empty request" (no bytes, or only blank lines).
 */
http_parse_status http_request_parse(http_request *req, const char *data,
                                     size_t len, char *err, size_t errlen);

/* Frees what `req` owns and leaves it empty. Safe to call twice. */
void http_request_free(http_request *req);

#endif /* CLI_HTTP_REQUEST_H */
