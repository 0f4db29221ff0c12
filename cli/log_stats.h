/*
 * log_stats.h: the summary of classify-run --log: requests per verdict
 * and reason, and the most frequent User-Agents and client networks (/24
 * for IPv4, /48 for IPv6) of each, in bounded memory.
 *
 * The top lists are Misra-Gries summaries of TOP_SLOTS entries: exact
 * while a verdict has at most TOP_SLOTS distinct values, and beyond that
 * each count is low by at most the `slack` the table reports (every value
 * more frequent than requests / (TOP_SLOTS + 1) is sure to be listed).
 * Keys are told apart by their length and a 64-bit hash of all their
 * bytes; a User-Agent is kept for display up to TOP_KEY bytes.
 */
#ifndef CLI_LOG_STATS_H
#define CLI_LOG_STATS_H

#include <classify.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TOP_SLOTS 2048
#define TOP_KEY 240
/* Verdict-and-reason groups counted one by one; the rest are summed. */
#define STATS_MAX_GROUPS 64

typedef struct log_stats log_stats;

log_stats *log_stats_new(void);
void log_stats_free(log_stats *s);

/* Counts one request: its verdict, its User-Agent and its client address
 * (clf_ctx_client_ip's 16 bytes; valid 0: unknown). Returns 0, or -1 out
 * of memory (the request is then counted only in the totals). */
int log_stats_add(log_stats *s, const clf_verdict *v, const char *ua, size_t ua_len,
                  const uint8_t addr[16], int valid);

/* Prints the table: totals, accepted and rejected by reason with
 * percentages, then the top `top` User-Agents and networks of each. */
void log_stats_print(const log_stats *s, FILE *out, size_t top);

/* Formats the /24 or /48 of addr ("203.0.113.0/24", "2001:db8:1::/48"). */
void log_stats_network(const uint8_t addr[16], int valid, char *buf, size_t len);

/* 1234567 as "1,234,567" in buf; returns buf. */
const char *log_stats_commas(uint64_t v, char buf[32]);

#endif
