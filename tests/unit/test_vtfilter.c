/* Tests for src/term/vtfilter.c: what reaches libvterm for hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "term/vtfilter.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Filter s; return the output and set *used. */
static const char *run_all(const char *s, size_t len, size_t *used)
{
	static struct buf out;
	buf_consume(&out, out.len);
	static struct vtfilter f;
	*used = vtfilter(&f, s, len, &out);
	buf_addch(&out, '\0');
	out.len--;
	return out.data;
}

/*
 * The same as libvterm would see it without the filter's own sequences for
 * screen.c: the SGRs back in their own form (CSI ? Pm $ m as CSI Pm m), the
 * saves and restores (CSI ? $ s, u) gone.
 */
static const char *run(const char *s, size_t len, size_t *used)
{
	static char plain[4096];
	const char *all = run_all(s, len, used), *m;
	size_t n = 0;
	while ((m = strstr(all, "\033[?")) != NULL) {
		size_t k = strspn(m + 3, "0123456789;:");
		bool ours = m[3 + k] == '$' && m[4 + k] && strchr("msu", m[4 + k]);
		size_t upto = (size_t)(m - all) + (ours ? 0 : 3);
		memcpy(plain + n, all, upto);
		n += upto;
		if (ours && m[4 + k] == 'm') { /* in place of the "\033[m" before it */
			n -= 3;
			n += (size_t)sprintf(plain + n, "\033[%.*sm", (int)k, m + 3);
		}
		all = ours ? m + 5 + k : m + 3;
	}
	strcpy(plain + n, all);
	return plain;
}

#define RUN(lit, used) run(lit, sizeof(lit) - 1, used)
#define RUN_ALL(lit, used) run_all(lit, sizeof(lit) - 1, used)

/* Filter s noting the runs; how many SGR runs, and the output. */
static const char *sgr_runs(const char *s, size_t *used, int *nsgr)
{
	static struct buf out, runs;
	buf_consume(&out, out.len);
	buf_consume(&runs, runs.len);
	struct vtfilter f = {.runs = &runs};
	*used = vtfilter(&f, s, strlen(s), &out);
	*nsgr = 0;
	for (size_t i = 0; i < runs.len; i += sizeof(struct vtfilter_run)) {
		struct vtfilter_run r;
		memcpy(&r, runs.data + i, sizeof r);
		*nsgr += r.kind == VTFILTER_SGR;
	}
	buf_addch(&out, '\0');
	out.len--;
	return out.data;
}

/*
 * Every SGR goes out in one form, and is noted for the pane when its
 * numbers are as libvterm reads them: the common ones (read on their own
 * way, sgr_fast) and the rest (do_csi) alike.
 */
static void test_sgr_forms(void **state)
{
	(void)state;
	size_t u;
	int n;
	assert_string_equal(sgr_runs("\033[1;31mx\033[m", &u, &n),
			    "\033[m\033[?1;31$mx\033[m\033[?$m");
	assert_int_equal(n, 2);
	/* Ten digits: out, not noted (libvterm keeps such a number otherwise). */
	assert_string_equal(sgr_runs("\033[1234567890m", &u, &n), "\033[m\033[?1234567890$m");
	assert_int_equal(n, 0);
	/* Sixteen separators: more arguments than libvterm holds, dropped; fifteen kept. */
	assert_string_equal(sgr_runs("\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1m", &u, &n), "");
	assert_string_equal(sgr_runs("\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1m", &u, &n),
			    "\033[m\033[?1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1$m");
	assert_int_equal(n, 1);
	/* Longer than the quick reading looks: the same. */
	assert_string_equal(
		sgr_runs("\033[000000001;000000002;000000003;000000004;000000005;000000006;0007m",
			 &u, &n),
		"\033[m\033[?000000001;000000002;000000003;000000004;000000005;000000006;0007$m");
	assert_int_equal(n, 1);
	/* Cut short: left for the next read; a colon form; a private one is no SGR. */
	assert_string_equal(sgr_runs("x\033[38;5", &u, &n), "x");
	assert_int_equal(u, 1);
	assert_string_equal(sgr_runs("\033[38:2::1:2:3m\033[>4;2m", &u, &n),
			    "\033[m\033[?38:2::1:2:3$m\033[>4;2m");
	assert_int_equal(n, 1);
}

/*
 * What libvterm drops reaches screen.c in order: each SGR, in our form;
 * saves and restores of the cursor; the program's own such sequences never.
 */
static void test_screen_is_told_what_libvterm_drops(void **state)
{
	(void)state;
	size_t u;
	assert_string_equal(RUN_ALL("\033[2;4:3;58:2::1:2:3mx\033[m", &u),
			    "\033[m\033[?2;4:3;58:2::1:2:3$mx\033[m\033[?$m");
	assert_string_equal(
		RUN_ALL("\0337a\0338\033[?1049h\033[?25;1049l", &u),
		"\0337\033[?$sa\0338\033(B\033)B\033*B\033+B\017\033[?$u"
		"\033[?1049h\033[?$s\033[?25;1049l\033(B\033)B\033*B\033+B\017\033[?$u");
	/* The character sets saved with the cursor come back with it. */
	assert_string_equal(RUN_ALL("\033(0\016\0337\033(B\017\0338", &u),
			    "\033(0\016\0337\033[?$s\033(B\017\0338\033(0\033)B\033*B\033+B\016"
			    "\033[?$u");
	/* Not an SGR: a private mode report, a DECSCA. */
	assert_string_equal(RUN_ALL("\033[>4;2m\033[1\"q", &u), "\033[>4;2m\033[1\"q");
	/* The program's copy of ours is dropped. */
	assert_string_equal(RUN_ALL("a\033[?1$mb\033[?$uc\033[?$s\033[?$J", &u), "abc");
	/* ED 3, erase the history, which libvterm ignores; ED 2 as it is. */
	assert_string_equal(RUN_ALL("\033[2J\033[3J", &u), "\033[2J\033[?$J");
	/* Mode 47 as 1047, which libvterm has. */
	assert_string_equal(RUN_ALL("\033[?47h\033[?1;47l", &u), "\033[?1047h\033[?1;1047l");
	/*
	 * What is not UTF-8 reaches libvterm as U+FFFD, one for each bad lead
	 * byte or each whole banned sequence: a C1 control written in UTF-8
	 * (U+009B would be a CSI), a surrogate, an overlong form.
	 */
	assert_string_equal(RUN_ALL("a\xc2\x9b"
				    "2Jb",
				    &u),
			    "a\xef\xbf\xbd"
			    "2Jb");
	assert_string_equal(RUN_ALL("\xd8"
				    "A\xed\xa0\x80\xe0\x80\xaf.",
				    &u),
			    "\xef\xbf\xbd"
			    "A\xef\xbf\xbd\xef\xbf\xbd.");
	assert_string_equal(RUN_ALL("\xc3\xa9\xe4\xb8\xad", &u), "\xc3\xa9\xe4\xb8\xad");
	/* After a reset, a restore restores the reset state. */
	assert_string_equal(RUN_ALL("\033c", &u),
			    "\033c\033[?1000;1002;1003;1004;1005;1006;1015l\0337\033[?$s");
}

static void test_text_and_ordinary_sequences_pass(void **state)
{
	(void)state;
	size_t u;
	assert_string_equal(RUN("hello\r\n", &u), "hello\r\n");
	assert_int_equal(u, 7);
	assert_string_equal(RUN("\033[1;31mX\033[0m\033(B\0337\033#8", &u),
			    "\033[1;31mX\033[0m\033(B\0337\033#8");
	assert_string_equal(RUN("\033]2;title\007", &u), "\033]2;title\007");
	assert_string_equal(RUN("\033P+q544e\033\\", &u), "\033P+q544e\033\\");
}

static void test_unfinished_sequences_are_held(void **state)
{
	(void)state;
	size_t u;
	assert_string_equal(RUN("ab\033", &u), "ab");
	assert_int_equal(u, 2);
	assert_string_equal(RUN("ab\033]2;tit", &u), "ab");
	assert_int_equal(u, 2);
	assert_string_equal(RUN("x\033]2;t\033", &u), "x");
	assert_int_equal(u, 1);
	assert_string_equal(RUN("\033[1;3", &u), "");
	assert_int_equal(u, 0);
	assert_string_equal(RUN("\033(", &u), "");
	assert_int_equal(u, 0);
}

static void test_controls_after_esc_move_in_front(void **state)
{
	(void)state;
	size_t u;
	/* libvterm turned ESC <ctl> ] into an OSC it then overflowed on. */
	assert_string_equal(RUN("\033\034]x\033\034\\y", &u), "\034\033]x\033\\\034\033\\y");
	assert_string_equal(RUN("\033\n[2J", &u), "\n\033[2J");
	assert_string_equal(RUN("\033[1\n;2H", &u), "\n\033[1;2H");
}

static void test_controls_inside_strings_are_dropped(void **state)
{
	(void)state;
	size_t u;
	assert_string_equal(RUN("\033]2;a\001b\033\034\\z", &u), "\033]2;ab\033\\\034\033\\z");
	/* ESC that is not ST ends the string and begins the next sequence. */
	assert_string_equal(RUN("\033]2;ab\033[1m", &u), "\033]2;ab\033\\\033[1m");
}

static void test_strings_libvterm_would_print_are_dropped(void **state)
{
	(void)state;
	size_t u;
	/* libvterm 0.1.4 prints APC, PM and SOS bodies; xterm and tmux show nothing. */
	assert_string_equal(RUN("a\033_Gf=100;abc\033\\b", &u), "ab");
	assert_string_equal(RUN("a\033^pm\007b", &u), "ab");
	/* Found by fuzz_pane: a broken UTF-8 sequence in the body outlived it. */
	assert_string_equal(RUN("\033X\xe4\xb8\xad\xf0\x80\x65\xcc\033\\Ann", &u), "Ann");
	assert_string_equal(RUN("x\033_unfinished", &u), "x");
	assert_int_equal(u, 1);
}

static void test_too_many_csi_args_dropped(void **state)
{
	(void)state;
	size_t u;
	assert_string_equal(RUN("a\033[;;;;;;;;;;;;;;;;;;;;mb", &u), "ab");
	assert_string_equal(RUN("\033[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16m", &u),
			    "\033[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16m");
	assert_string_equal(RUN("\033[1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17m.", &u), ".");
}

static void test_cancel_and_void_escapes(void **state)
{
	(void)state;
	size_t u;
	assert_string_equal(RUN("\033]2;x\030y", &u), "y");
	assert_string_equal(RUN("\033[12\030y", &u), "y");
	assert_string_equal(RUN("\033\033[m", &u), "\033[m");
	/* The ESC is void; the byte after it, not UTF-8, goes on as U+FFFD. */
	assert_string_equal(RUN("\033\x80z", &u), "\xef\xbf\xbdz");
}

static void test_rep_is_expanded(void **state)
{
	(void)state;
	size_t u;
	struct vtfilter f = {0};
	struct buf out = {0};
	/* Nothing printed yet: libvterm would loop forever; dropped. */
	vtfilter(&f, "\033[2J\033[99:b", sizeof("\033[2J\033[99:b") - 1, &out);
	assert_string_equal(out.data, "\033[2J");
	buf_consume(&out, out.len);
	vtfilter(&f, "x\033[3b", sizeof("x\033[3b") - 1, &out);
	assert_string_equal(out.data, "xxxx");
	buf_consume(&out, out.len);
	vtfilter(&f, "\xc3\xa9\r\033[b", sizeof("\xc3\xa9\r\033[b") - 1, &out);
	assert_string_equal(out.data, "\xc3\xa9\r\xc3\xa9");
	buf_consume(&out, out.len);
	vtfilter(&f, "\033[999999999b", sizeof("\033[999999999b") - 1, &out);
	assert_int_equal(out.len, 2 * 4096);
	buf_free(&out);
	(void)u;
}

/*
 * ESC + intermediates + '[' (or a string introducer) is a CSI (a string) to
 * libvterm: printf '\033![5b' froze the dashboard (a bare REP). Every
 * intermediate with every such final byte is dropped; what follows is text.
 */
static void test_intermediates_before_csi_or_string_dropped(void **state)
{
	(void)state;
	const char finals[] = {'[', ']', 'P', '_', '^', 'X'};
	for (int im = 0x20; im <= 0x2f; im++) {
		for (size_t k = 0; k < sizeof finals; k++) {
			struct vtfilter f = {0};
			struct buf out = {0};
			char in[16];
			int n = snprintf(in, sizeof in, "\033%c%c5b", im, finals[k]);
			assert_int_equal(vtfilter(&f, in, (size_t)n, &out), (size_t)n);
			assert_string_equal(out.data, "5b");
			buf_free(&out);
		}
	}
	/* ...but ordinary escapes with intermediates still pass (charset, DECALN). */
	struct vtfilter f = {0};
	struct buf out = {0};
	vtfilter(&f, "\033(B\033#8", 6, &out);
	assert_string_equal(out.data, "\033(B\033#8");
	buf_free(&out);
}

/* OSC 52 is the pane owner's business, never libvterm's (its buffer cuts strings at 64). */
static void test_clipboard_is_taken_out(void **state)
{
	(void)state;
	struct buf clip = {0}, out = {0};
	struct vtfilter f = {.clip = &clip};
	const char w[] = "a\033]52;c;aGk=\033\\b\033]52;;c2Vjb25k\a";
	assert_int_equal(vtfilter(&f, w, sizeof w - 1, &out), sizeof w - 1);
	assert_string_equal(out.data, "ab");
	assert_true(f.clip_set);
	assert_string_equal(clip.data, ";c2Vjb25k"); /* the newest wins */
	/* A read is never answered, nor seen; a long write is whole; controls go. */
	f.clip_set = false;
	buf_consume(&out, out.len);
	assert_int_equal(vtfilter(&f, "\033]52;c;?\a", 9, &out), 9);
	assert_false(f.clip_set);
	struct buf big = {0};
	buf_addstr(&big, "\033]52;p;");
	for (int i = 0; i < 4000; i++)
		buf_addstr(&big, i == 7 ? "\r" : "QUJD");
	buf_addstr(&big, "\033\\");
	assert_int_equal(vtfilter(&f, big.data, big.len, &out), big.len);
	assert_true(f.clip_set);
	assert_int_equal(clip.len, 2 + 3999 * 4);
	assert_int_equal(out.len, 0);
	/* Split over two calls it waits for the rest; with no clip, it is dropped. */
	f.clip_set = false;
	assert_int_equal(vtfilter(&f, "\033]52;c;aG", 9, &out), 0);
	assert_false(f.clip_set);
	struct vtfilter none = {0};
	assert_int_equal(vtfilter(&none, "\033]52;c;aGk=\a", 12, &out), 12);
	assert_int_equal(out.len, 0);
	buf_free(&big);
	buf_free(&clip);
	buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_screen_is_told_what_libvterm_drops),
		cmocka_unit_test(test_sgr_forms),
		cmocka_unit_test(test_text_and_ordinary_sequences_pass),
		cmocka_unit_test(test_unfinished_sequences_are_held),
		cmocka_unit_test(test_controls_after_esc_move_in_front),
		cmocka_unit_test(test_controls_inside_strings_are_dropped),
		cmocka_unit_test(test_strings_libvterm_would_print_are_dropped),
		cmocka_unit_test(test_too_many_csi_args_dropped),
		cmocka_unit_test(test_cancel_and_void_escapes),
		cmocka_unit_test(test_rep_is_expanded),
		cmocka_unit_test(test_intermediates_before_csi_or_string_dropped),
		cmocka_unit_test(test_clipboard_is_taken_out),
	};
	return cmocka_run_group_tests_name("vtfilter", tests, NULL, NULL);
}
