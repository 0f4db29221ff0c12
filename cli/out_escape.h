/*
 * out_escape.h: how classify-run writes untrusted bytes (reasons,
 * User-Agents, explain steps): as text for people, or as JSON strings.
 */
#ifndef CLI_OUT_ESCAPE_H
#define CLI_OUT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Text output keeps one request per line: control bytes (0x00-0x1f,
 * 0x7f) are written as \xHH, every other byte as it is. */
void put_text(FILE *out, const char *s, size_t len);

/* A JSON string, quotes included: valid JSON whatever the bytes (each
 * maximal subpart of ill-formed UTF-8 becomes one U+FFFD, as decoders
 * that follow Unicode and WHATWG do: out_escape.c). */
void put_json_string(FILE *out, const char *s, size_t len);
void put_json_cstr(FILE *out, const char *s);

#endif
