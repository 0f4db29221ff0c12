/*
 * http_token.h: the RFC 9110 section 5.6.2 token character, shared by
 * classify-run's and classify-serve's request parsers (llhttp 8.1 is more
 * lenient about header names than RFC 9112 allows a server to be).
 */
#ifndef CLI_HTTP_TOKEN_H
#define CLI_HTTP_TOKEN_H

#include <string.h>

static inline int http_is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

#endif
