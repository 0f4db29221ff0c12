/*
 * test_redis_url.c: the --state-redis URL parser (serve/srv_redis_url.c)
 * and the checked readings of Redis replies (serve/srv_redis_proto.c):
 * every form with its fields, the errors with their places, and replies of
 * each kind, right and wrong, built as hiredis's reader builds them.
 */
#include <criterion/criterion.h>
#include <hiredis/read.h>
#include <string.h>

#include "srv_redis.h"
#include "srv_redis_proto.h"
#include "srv_redis_url.h"

static srv_redis_url ok(const char *s)
{
    srv_redis_url u;
    char err[256];
    int rc = srv_redis_url_parse(s, &u, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s", s, err);
    return u;
}

static void bad(const char *s, const char *msg)
{
    srv_redis_url u;
    char err[256];
    cr_assert_eq(srv_redis_url_parse(s, &u, err, sizeof err), -1, "%s parsed", s);
    cr_assert(strstr(err, msg) != NULL, "%s: '%s' lacks '%s'", s, err, msg);
}

Test(redis_url, tcp_forms)
{
    srv_redis_url u = ok("redis://10.0.0.5");
    cr_assert_str_eq(u.host, "10.0.0.5");
    cr_assert_eq(u.port, 6379);
    cr_assert_eq(u.db, 0);
    cr_assert_eq(u.has_password, 0);
    u = ok("redis://cache.example:6380/7");
    cr_assert_str_eq(u.host, "cache.example");
    cr_assert_eq(u.port, 6380);
    cr_assert_eq(u.db, 7);
    u = ok("redis://[::1]:7000/");
    cr_assert_str_eq(u.host, "::1");
    cr_assert_eq(u.port, 7000);
    u = ok("redis://:s3cr%40t%3a@h");
    cr_assert_str_eq(u.user, "");
    cr_assert_str_eq(u.password, "s3cr@t:");
    cr_assert_eq(u.has_password, 1);
    u = ok("redis://app:p:w@h:1/2");
    cr_assert_str_eq(u.user, "app");
    cr_assert_str_eq(u.password, "p:w");
    char name[128];
    srv_redis_url_name(&u, name, sizeof name);
    cr_assert_str_eq(name, "redis://h:1/2");
    u = ok("redis://[2001:db8::1]");
    srv_redis_url_name(&u, name, sizeof name);
    cr_assert_str_eq(name, "redis://[2001:db8::1]:6379/0");
}

Test(redis_url, unix_forms)
{
    srv_redis_url u = ok("unix:/run/redis/redis.sock");
    cr_assert_eq(u.is_unix, 1);
    cr_assert_str_eq(u.path, "/run/redis/redis.sock");
    u = ok("unix:relative.sock?db=3");
    cr_assert_str_eq(u.path, "relative.sock");
    cr_assert_eq(u.db, 3);
    u = ok("unix:///tmp/r@dis.sock");
    cr_assert_str_eq(u.path, "/tmp/r@dis.sock");
    cr_assert_eq(u.has_password, 0);
    u = ok("unix://:pw@/tmp/r.sock?db=1");
    cr_assert_str_eq(u.password, "pw");
    cr_assert_str_eq(u.path, "/tmp/r.sock");
    char name[128];
    srv_redis_url_name(&u, name, sizeof name);
    cr_assert_str_eq(name, "unix:/tmp/r.sock?db=1");
}

Test(redis_url, errors)
{
    bad("http://h", "at byte 1: expected redis://");
    bad("rediss://h", "TLS");
    bad("redis://", "at byte 9: no host");
    bad("redis://h:0", "at byte 11: the port is not a number from 1 to 65535");
    bad("redis://h:65536", "the port");
    bad("redis://h:x", "the port");
    bad("redis://h/x", "the database is not a number");
    bad("redis://h?db=1", "only /DB may follow");
    bad("redis://user@h", "a user without a password");
    bad("redis://:p%4@h", "two hex digits");
    bad("redis://:p%00@h", "a control character in the password");
    bad("redis://h h", "unexpected ' '");
    bad("redis://[::1", "must end with ']'");
    bad("unix:", "no socket path");
    bad("unix://relative", "absolute path");
    bad("unix:/s?x=1", "the only parameter is db=N");
    bad("unix:/s?db=", "db= is not a number");
    char longhost[300];
    memset(longhost, 'a', sizeof longhost);
    memcpy(longhost, "redis://", 8);
    longhost[sizeof longhost - 1] = '\0';
    bad(longhost, "longer than 255 bytes");
}

/* Replies as hiredis's reader makes them from wire bytes. */
static redisReply *reply_of(srv_redis_reader *rd, const char *wire)
{
    void *r = NULL;
    cr_assert_eq(redisReaderFeed(rd->rd, wire, strlen(wire)), REDIS_OK);
    cr_assert_eq(redisReaderGetReply(rd->rd, &r), REDIS_OK, "%s", rd->rd->errstr);
    cr_assert_not_null(r, "no reply from %s", wire);
    return r;
}

Test(redis_proto, readings)
{
    srv_redis_reader rd;
    cr_assert_eq(srv_redis_reader_init(&rd), 0);
    uint64_t n = 99;
    redisReply *r = reply_of(&rd, ":42\r\n");
    cr_assert_eq(srv_redis_reply_count(r, &n), 0);
    cr_assert_eq(n, 42);
    freeReplyObject(r);
    r = reply_of(&rd, "$-1\r\n");
    cr_assert_eq(srv_redis_reply_count(r, &n), 0);
    cr_assert_eq(n, 0);
    freeReplyObject(r);
    r = reply_of(&rd, "$20\r\n18446744073709551615\r\n");
    cr_assert_eq(srv_redis_reply_count(r, &n), 0);
    cr_assert_eq(n, UINT64_MAX);
    freeReplyObject(r);
    const char *wrong[] = {":-1\r\n", "$20\r\n18446744073709551616\r\n", "$2\r\n1x\r\n",
                           "$0\r\n\r\n", "+OK\r\n", "-ERR no\r\n", "*1\r\n:1\r\n"};
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        r = reply_of(&rd, wrong[i]);
        cr_assert_eq(srv_redis_reply_count(r, &n), -1, "%s read as a count", wrong[i]);
        freeReplyObject(r);
    }
    double v;
    int64_t t;
    r = reply_of(&rd, "$18\r\n12.5 1700000000000\r\n");
    cr_assert_eq(srv_redis_reply_score(r, &v, &t), 0);
    cr_assert_float_eq(v, 12.5, 1e-12);
    cr_assert_eq(t, 1700000000000);
    freeReplyObject(r);
    const char *wrong_scores[] = {"$6\r\n-1 100\r\n", "$7\r\nnan 100\r\n", "$8\r\n1e999 10\r\n",
                                  "$3\r\n1 x\r\n", "$1\r\n1\r\n", ":5\r\n"};
    for (size_t i = 0; i < sizeof wrong_scores / sizeof *wrong_scores; i++) {
        r = reply_of(&rd, wrong_scores[i]);
        cr_assert_eq(srv_redis_reply_score(r, &v, &t), -1, "%s read as a score", wrong_scores[i]);
        freeReplyObject(r);
    }
    int64_t e;
    r = reply_of(&rd, ":1700000060000\r\n");
    cr_assert_eq(srv_redis_reply_mark(r, &e), 0);
    cr_assert_eq(e, 1700000060000);
    freeReplyObject(r);
    char sha[41];
    r = reply_of(&rd, "$40\r\n0123456789abcdef0123456789abcdef01234567\r\n");
    cr_assert_eq(srv_redis_reply_sha(r, sha), 0);
    cr_assert_str_eq(sha, "0123456789abcdef0123456789abcdef01234567");
    freeReplyObject(r);
    r = reply_of(&rd, "$40\r\n0123456789ABCDEF0123456789abcdef01234567\r\n");
    cr_assert_eq(srv_redis_reply_sha(r, sha), -1);
    freeReplyObject(r);
    srv_redis_reader_free(&rd);
}

Test(redis_proto, marks_message)
{
    srv_redis_reader rd;
    cr_assert_eq(srv_redis_reader_init(&rd), 0);
    int64_t e;
    const char *key;
    size_t klen;
    redisReply *r = reply_of(&rd, "*3\r\n$7\r\nmessage\r\n$9\r\nclf:marks\r\n"
                                  "$36\r\n1700000060000 m:3600:trap:ip:1.2.3.4\r\n");
    cr_assert_eq(srv_redis_reply_message(r, "clf:marks", 9, 128, &e, &key, &klen), 0);
    cr_assert_eq(e, 1700000060000);
    cr_assert_eq(klen, 22);
    cr_assert(memcmp(key, "m:3600:trap:ip:1.2.3.4", 22) == 0);
    cr_assert_eq(srv_redis_reply_message(r, "other:marks", 11, 128, &e, &key, &klen), -1,
                 "another channel taken");
    cr_assert_eq(srv_redis_reply_message(r, "clf:marks", 9, 21, &e, &key, &klen), -1,
                 "a key over keymax taken");
    freeReplyObject(r);
    const char *wrong[] = {
        "*3\r\n$7\r\nmessage\r\n$9\r\nclf:marks\r\n$15\r\n1 c:60:x:ip:1.2\r\n",
        "*3\r\n$7\r\nmessage\r\n$9\r\nclf:marks\r\n$8\r\nx m:1:a:\r\n",
        "*3\r\n$7\r\nmessage\r\n$9\r\nclf:marks\r\n$4\r\n1 m:\r\n",
        "*3\r\n$9\r\nsubscribe\r\n$9\r\nclf:marks\r\n:1\r\n",
        "*2\r\n$7\r\nmessage\r\n$9\r\nclf:marks\r\n", "+OK\r\n"};
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        r = reply_of(&rd, wrong[i]);
        cr_assert_eq(srv_redis_reply_message(r, "clf:marks", 9, 128, &e, &key, &klen), -1,
                     "%s read as a mark", wrong[i]);
        freeReplyObject(r);
    }
    srv_redis_reader_free(&rd);
}

Test(redis_proto, array_bound)
{
    srv_redis_reader rd;
    void *r = NULL;
    cr_assert_eq(srv_redis_reader_init(&rd), 0);
    cr_assert_eq(redisReaderFeed(rd.rd, "*65536\r\n", 8), REDIS_OK);
    cr_assert_eq(redisReaderGetReply(rd.rd, &r), REDIS_OK); /* allowed: waits for elements */
    cr_assert_null(r);
    srv_redis_reader_free(&rd);
    cr_assert_eq(srv_redis_reader_init(&rd), 0);
    cr_assert_eq(redisReaderFeed(rd.rd, "*65537\r\n", 8), REDIS_OK);
    cr_assert_eq(redisReaderGetReply(rd.rd, &r), REDIS_ERR, "an array over the bound was taken");
    srv_redis_reader_free(&rd);
}
