/*
 * hex.h: the value of a hexadecimal digit, for the programs' decoders of
 * escapes: classify-run's nginx log lines (`\xHH`, cli/log_nginx.c) and
 * classify-serve's --state-redis URLs (`%HH`, RFC 3986 section 2.1,
 * serve/srv_redis_url.c). The library keeps its own, vm_hex_value
 * (vm/chars.h): the programs see only classify.h of it.
 */
#ifndef CM_HEX_H
#define CM_HEX_H

/* The value of hex digit c (either case), or -1. */
static inline int cm_hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    return -1;
}

#endif
