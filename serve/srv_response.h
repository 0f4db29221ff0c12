/*
 * srv_response.h: an HTTP/1.1 response head, written into a fixed buffer
 * with plain copies (no printf on the hot path).
 */
#ifndef CLI_SRV_RESPONSE_H
#define CLI_SRV_RESPONSE_H

#include <stddef.h>

/* Room for any head srv_response_head() writes: the fixed lines, a
 * content type and an encoded reason of at most SRV_REASON_HDR_MAX. */
#define SRV_REASON_HDR_MAX 256
#define SRV_HEAD_MAX 1024

typedef struct srv_answer {
    unsigned status;
    int verdict;        /* -1: not a classification (errors, admin); 0 reject; 1 accept */
    const char *reason; /* verdict's reason, NULL when none */
    size_t reason_len;
    const char *body;
    size_t body_len;
    const char *content_type; /* NULL: no Content-Type */
    int close;                /* Connection: close */
    int head_only;            /* HEAD: the length, not the bytes */
} srv_answer;

/* Writes the head of `a` into out (SRV_HEAD_MAX bytes) and returns its
 * length. `date` is a whole "Date: ...\r\n" line. */
size_t srv_response_head(char *out, const srv_answer *a, const char *date, size_t date_len);

/* "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" for time `t` into out (64
 * bytes); returns the length. */
size_t srv_date_line(char *out, long long t);

const char *srv_status_text(unsigned status);

#endif /* CLI_SRV_RESPONSE_H */
