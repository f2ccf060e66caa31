/* SPDX-License-Identifier: Apache-2.0
 * Tests of base/: diagnostics, growable arrays, the hash map, atomic output,
 * UTF-8 boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/clause.h"
#include "base/diag.h"
#include "base/hash.h"
#include "base/jsonw.h"
#include "base/keys.h"
#include "base/map.h"
#include "base/outfile.h"
#include "base/textfile.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "base/warn.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_diag_first_wins(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	assert_int_equal(diag_at(&d, DIAG_EINPUT, "t.jsonl", 3, 7, "bad '%s' (expected %s)", "x", "y"),
			 DIAG_EINPUT);
	diag_set(&d, DIAG_EIO, "later");
	assert_string_equal(d.msg, "t.jsonl:3:7: bad 'x' (expected y)");
	assert_int_equal(d.count, 2);
	assert_int_equal(d.code, DIAG_EINPUT);
	assert_int_equal(diag_exit_status(d.code), 2);
	assert_int_equal(diag_exit_status(DIAG_EINTERNAL), 3);
	assert_int_equal(diag_exit_status(DIAG_ENOMEM), 2); /* a resource limit, not a bug */
	diag_init(&d);
	diag_at(&d, DIAG_EINPUT, "f", 4, 0, "m");
	assert_string_equal(d.msg, "f:4: m");
}

static void test_vec_limit(void **state)
{
	(void)state;
	struct vec v;
	vec_init(&v, sizeof(int), 100);
	for (int i = 0; i < 100; i++)
		*(int *)vec_push(&v) = i;
	assert_null(vec_push(&v));
	assert_int_equal(VEC_AT(&v, int, 99), 99);
	int more[3] = {1, 2, 3};
	assert_int_equal(vec_append(&v, more, 3), DIAG_ENOMEM);
	vec_clear(&v);
	assert_int_equal(vec_append(&v, more, 3), 0);
	assert_int_equal(v.len, 3);
	vec_release(&v);
}

static void test_map_churn(void **state)
{
	(void)state;
	struct map m;
	map_init(&m);
	const uint64_t n = 50000;
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(map_put(&m, i * 7919, i), 0);
	assert_int_equal(m.len, n);
	/* delete every third key; the rest must stay reachable (backward shift) */
	for (uint64_t i = 0; i < n; i += 3)
		assert_true(map_del(&m, i * 7919));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t *v = map_get(&m, i * 7919);
		if (i % 3 == 0)
			assert_null(v);
		else {
			assert_non_null(v);
			assert_int_equal(*v, i);
		}
	}
	assert_false(map_del(&m, 1));
	assert_int_equal(map_put(&m, 0, 5), 0); /* key 0 is an ordinary key */
	assert_int_equal(*map_get(&m, 0), 5);
	map_release(&m);
}

/* map_ref finds a present key and inserts an absent one as 0, across
 * growth, and agrees with map_get/map_put on the same keys. */
static void test_map_ref(void **state)
{
	(void)state;
	struct map m, w;
	map_init(&m);
	map_init(&w);
	for (uint64_t i = 0; i < 30000; i++) {
		uint64_t k = (i * 2654435761u) % 7001; /* repeats */
		uint64_t *v = map_ref(&m, k);
		assert_non_null(v);
		(*v)++;
		uint64_t *x = map_get(&w, k);
		assert_int_equal(map_put(&w, k, x ? *x + 1 : 1), 0);
	}
	assert_int_equal(m.len, w.len);
	for (uint64_t k = 0; k < 7001; k++) {
		uint64_t *a = map_get(&m, k), *b = map_get(&w, k);
		assert_true((a == NULL) == (b == NULL));
		if (a)
			assert_int_equal(*a, *b);
	}
	assert_int_equal(*map_ref(&m, 123456789), 0);
	assert_int_equal(m.len, w.len + 1);
	map_release(&m);
	map_release(&w);
}

static void test_hash_stable(void **state)
{
	(void)state;
	/* fixed values: content ids must hash the same on every machine */
	assert_true(hash_str("abc", 0) == hash_str("abc", 0));
	assert_true(hash_str("abc", 0) != hash_str("abd", 0));
	assert_true(hash_str("abc", 1) != hash_str("abc", 0));
	assert_true(hash_combine(1, 2) != hash_combine(2, 1));
	assert_true(hash_mix64(0) == 0xe220a8397b1dcdafULL);
}

static int count_entries(const char *dir)
{
	DIR *dp = opendir(dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(dp));)
		n += e->d_name[0] != '.';
	closedir(dp);
	return n;
}

static void test_outfile_atomic(void **state)
{
	(void)state;
	char dir[] = "/tmp/agentcap-outfile-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/out.json", dir);
	struct diag d;
	diag_init(&d);
	struct outfile of;
	assert_int_equal(outfile_open(&of, path, &d), 0);
	fputs("first", of.fp);
	assert_int_equal(outfile_commit(&of, &d), 0);
	/* the file gets the usual mode, not mkstemp's 0600 */
	struct stat sb;
	mode_t mask = umask(022);
	assert_int_equal(stat(path, &sb), 0);
	umask(mask);
	assert_int_equal(sb.st_mode & 0777, 0666 & ~mask);
	/* an aborted rewrite leaves the old content and no temporary file */
	assert_int_equal(outfile_open(&of, path, &d), 0);
	fputs("half-writ", of.fp);
	outfile_abort(&of);
	char buf[32] = {0};
	FILE *f = fopen(path, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "first");
	assert_int_equal(count_entries(dir), 1);
	/* a directory that does not exist is an error naming the path */
	char bad[300];
	snprintf(bad, sizeof(bad), "%s/no/such/out.json", dir);
	assert_int_equal(outfile_open(&of, bad, &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, bad));
	unlink(path);
	rmdir(dir);
}

struct tkey {
	const char *path;
	int payload;
};

static void test_keys(void **state)
{
	(void)state;
	static const struct tkey table[] = {
		{"name", 1}, {"engine", 2}, {"engine.block_size", 3}, {"engine.max_num_seqs", 4},
		{"engine.cache", 5}, {"engine.cache.tokens", 6}, {"slo", 7},
	};
	const size_t n = sizeof(table) / sizeof(table[0]);
	const struct tkey *k = keys_find(table, n, sizeof(table[0]), "engine.max_num_seqs");
	assert_non_null(k);
	assert_int_equal(k->payload, 4);
	assert_null(keys_find(table, n, sizeof(table[0]), "engine.max"));
	char buf[128];
	keys_children(table, n, sizeof(table[0]), "", buf, sizeof(buf));
	assert_string_equal(buf, "name, engine, slo");
	keys_children(table, n, sizeof(table[0]), "engine", buf, sizeof(buf));
	assert_string_equal(buf, "block_size, max_num_seqs, cache");
	keys_children(table, n, sizeof(table[0]), "engine", buf, 16); /* truncated, never overrun */
	assert_string_equal(buf, "block_size");
}

static void test_textfile(void **state)
{
	(void)state;
	char path[] = "/tmp/agentcap-textfile-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "{\n  \"a\": 1,\n  oops\n}\n";
	assert_int_equal(write(fd, text, sizeof(text) - 1), (long)(sizeof(text) - 1));
	close(fd);
	struct diag d;
	diag_init(&d);
	char *got = textfile_read(path, 1 << 20, "a test file", &d);
	assert_non_null(got);
	assert_string_equal(got, text);
	long line, col;
	textfile_line_col(got, strstr(got, "oops"), &line, &col);
	assert_int_equal(line, 3);
	assert_int_equal(col, 3);
	free(got);
	/* past the limit: an input error naming the file and what was expected */
	assert_null(textfile_read(path, 8, "a test file", &d));
	char want[128];
	snprintf(want, sizeof(want), "%s: larger than 8 bytes (expected a test file)", path);
	assert_string_equal(d.msg, want);
	unlink(path);
	diag_init(&d);
	assert_null(textfile_read(path, 1 << 20, "a test file", &d));
	assert_int_equal(d.code, DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "cannot open"));
	/* a NUL byte would end the text early: an input error at its place */
	char path2[] = "/tmp/agentcap-textfile-XXXXXX";
	fd = mkstemp(path2);
	assert_true(fd >= 0);
	const char nul[] = "a,b\n1,2\n3\0,4\n";
	assert_int_equal(write(fd, nul, sizeof(nul) - 1), (long)(sizeof(nul) - 1));
	close(fd);
	diag_init(&d);
	assert_null(textfile_read(path2, 1 << 20, "a test file", &d));
	assert_int_equal(d.code, DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s:3:2: a NUL byte (expected a test file, as text)", path2);
	assert_string_equal(d.msg, want);
	unlink(path2);
}

/* Warnings keep their order, cut long messages and count what overflows. */
static void test_warn(void **state)
{
	(void)state;
	struct warn_list w;
	warn_list_init(&w);
	assert_false(warn_has(&w, "a"));
	warn_add(&w, "a", "%d calls", 3);
	char big[2 * WARN_MSG_MAX];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	warn_add(&w, "b", "%s", big);
	assert_int_equal(w.count, 2);
	assert_string_equal(w.items[0].msg, "3 calls");
	assert_int_equal(strlen(w.items[1].msg), WARN_MSG_MAX - 1);
	assert_true(warn_has(&w, "b"));
	for (int i = 2; i < WARN_MAX + 3; i++)
		warn_add(&w, "c", "more");
	assert_int_equal(w.count, WARN_MAX);
	assert_int_equal(w.dropped, 3);
}

/* Every hand-written JSON file escapes through jsonw: quotes, backslashes,
 * the short escapes, other control bytes and DEL as \u00XX, UTF-8 as is,
 * NULL and non-finite numbers as null. */
static void test_jsonw(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	jsonw_str(fp, "a\"b\\c\n\r\t\x01\x7f caf\xc3\xa9");
	fputc(' ', fp);
	jsonw_str(fp, NULL);
	fputc(' ', fp);
	jsonw_num(fp, 0.1);
	fputc(' ', fp);
	jsonw_num(fp, INFINITY);
	fputc(' ', fp);
	jsonw_num(fp, -2.5e-12);
	assert_int_equal(fclose(fp), 0);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u007f caf\xc3\xa9\" null 0.1 null -2.5e-12");
	free(buf);
}

/* utf8: well-formed characters decode to their length and code point,
 * every kind of ill-formed one to 0; a cut never ends inside a character
 * (at every max over text of 1- to 4-byte characters, the prefix decodes
 * whole), and bytes that lead nothing are cut where asked. */
static void test_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t len;
		uint32_t cp;
	} OK[] = {
		{"a", 1, 'a'}, {"\x7f", 1, 0x7f}, {"\xc2\x80", 2, 0x80}, {"\xc3\xa9", 2, 0xe9},
		{"\xe0\xa0\x80", 3, 0x800}, {"\xe6\x97\xa5", 3, 0x65e5}, {"\xed\x9f\xbf", 3, 0xd7ff},
		{"\xef\xbf\xbd", 3, 0xfffd}, {"\xf0\x90\x80\x80", 4, 0x10000},
		{"\xf4\x8f\xbf\xbf", 4, 0x10ffff},
	};
	for (size_t i = 0; i < sizeof(OK) / sizeof(OK[0]); i++) {
		uint32_t cp = 0;
		assert_int_equal(utf8_decode(OK[i].s, strlen(OK[i].s), &cp), OK[i].len);
		assert_int_equal(cp, OK[i].cp);
		/* one byte short is not a character */
		assert_int_equal(utf8_decode(OK[i].s, OK[i].len - 1, NULL), 0);
	}
	static const char *const BAD[] = {
		"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf",
		"\xed\xa0\x80", "\xf0\x80\x80\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff",
		"\xc3(", "\xe6\x97(",
	};
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++)
		assert_int_equal(utf8_decode(BAD[i], strlen(BAD[i]), NULL), 0);
	assert_int_equal(utf8_decode("", 0, NULL), 0);

	const char *text = "a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80z"; /* a é 日 😀 z */
	size_t len = strlen(text);
	static const size_t WANT[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 11};
	for (size_t max = 0; max <= len + 2; max++) {
		size_t k = utf8_cut(text, len, max);
		assert_int_equal(k, max <= len ? WANT[max] : len);
		for (size_t at = 0; at < k;) {
			size_t n = utf8_decode(text + at, k - at, NULL);
			assert_true(n > 0);
			at += n;
		}
	}
	/* stray continuation bytes lead nothing: cut where asked */
	assert_int_equal(utf8_cut("ab\x80\x80\x80\x80", 6, 4), 4);
	assert_int_equal(utf8_cut("\x80\x80", 2, 1), 1);
	/* controls: C0, DEL, C1; not space, not U+00A0 */
	assert_true(utf8_is_control(0x1b) && utf8_is_control(0) && utf8_is_control(0x7f) &&
		    utf8_is_control(0x9b));
	assert_false(utf8_is_control(' ') || utf8_is_control(0xa0) || utf8_is_control(0xe9));
}

/* Clauses go in whole or are counted: a 60-byte buffer takes two short
 * clauses, not the third's first words, and ends "(and 1 more)". */
static void test_clauses_whole(void **state)
{
	(void)state;
	char buf[60];
	struct clause_list l;
	clause_init(&l, buf, sizeof(buf));
	clause_add(&l, "TP%d: fits", 1);
	clause_add(&l, "TP%d: fits too", 2);
	assert_string_equal(buf, "TP1: fits; TP2: fits too");
	clause_add(&l, "TP4: a mixture of experts whose routed experts do not fit");
	assert_string_equal(buf, "TP1: fits; TP2: fits too (and 1 more)");
	clause_add(&l, "x");
	assert_string_equal(buf, "TP1: fits; TP2: fits too; x (and 1 more)");
	clause_add(&l, "another clause that is far too long for what is left of it");
	assert_string_equal(buf, "TP1: fits; TP2: fits too; x (and 2 more)");
	assert_true(strlen(buf) < sizeof(buf));
	/* resuming a list keeps what is there */
	char b2[40] = "first";
	clause_resume(&l, b2, sizeof(b2));
	clause_add(&l, "second");
	assert_string_equal(b2, "first; second");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diag_first_wins),
		cmocka_unit_test(test_clauses_whole),
		cmocka_unit_test(test_jsonw),
		cmocka_unit_test(test_vec_limit),
		cmocka_unit_test(test_map_churn),
		cmocka_unit_test(test_map_ref),
		cmocka_unit_test(test_hash_stable),
		cmocka_unit_test(test_outfile_atomic),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_textfile),
		cmocka_unit_test(test_warn),
		cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
