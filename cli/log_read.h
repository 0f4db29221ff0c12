/*
 * log_read.h: classify-run --log reads an access log line by line, plain
 * or gzip'd (zlib tells them apart by the magic bytes, not by the name,
 * and reads concatenated gzip members, as rotated logs joined with cat
 * are), with one buffer allocated when it is opened: a line longer than
 * LOG_MAX_LINE is reported as too long and skipped, never held.
 */
#ifndef CLI_LOG_READ_H
#define CLI_LOG_READ_H

#include <stddef.h>
#include <stdint.h>

/* The longest line kept, without its line ending: no access log line of
 * a real request comes near it (nginx's own log buffer is 64 KiB). */
#define LOG_MAX_LINE ((size_t)64 << 10)

typedef struct log_reader log_reader;

typedef enum log_read_status {
    LOG_LINE = 0,     /* *line, *len: the line, without "\n" or "\r\n" */
    LOG_TOO_LONG = 1, /* a line over LOG_MAX_LINE was skipped (its number counts) */
    LOG_EOF = 2,
    LOG_ERROR = 3     /* a read or gzip error: log_reader_error() says which */
} log_read_status;

/* Opens `path` ("-": standard input). Returns 0, or -1 with errno set
 * (ENOMEM when the buffer cannot be had). */
int log_reader_open(const char *path, log_reader **out);
void log_reader_close(log_reader *r);

/* The next line. It is NUL-terminated at line[len] and stays valid, and
 * writable, until the next call. *lineno counts from 1, over every line
 * read, too long ones included. */
log_read_status log_reader_next(log_reader *r, char **line, size_t *len, uint64_t *lineno);

/* What went wrong after LOG_ERROR (zlib's message or strerror). */
const char *log_reader_error(const log_reader *r);

/* For the progress line: bytes read from the file so far (compressed
 * bytes for a gzip'd file), and its size (0 when not a regular file). */
uint64_t log_reader_offset(log_reader *r);
uint64_t log_reader_size(const log_reader *r);

#endif
