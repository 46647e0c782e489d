"""The cases of fidelity.py: programs and generated screens, as a user's agents print them.

A case: name; cmd (sh, run once the pane has its size; the harness keeps it
alive after); agent (run it as an agent's command, so that its history can
be read with `workrex capture`, and ("capture",) compare its --screen and -e); done (a regex the first screen waits for, FIDELITY-END by
default); steps (("resize", cols, rows), ("keys", [tmux send-keys words]),
("done", regex) to compare again, ("history",) to compare the history and
screen as text, ("wait", regex) only to wait, and
("done", regex, tmux_wrong) where tmux is wrong on that screen); cursor (compare it too, default yes);
tmux_wrong ((why, fix)) where tmux is not the answer: fix(cells, raw) turns
tmux's screen into the right one.
"""

END = "; printf 'FIDELITY-END'; exec sleep 600"


def sh(body):
    return body + END


LONG = sh("i=0; while [ $i -lt 40 ]; do printf 'line %02d: the quick brown fox jumps over "
          "the lazy dog; \\033[1mbold\\033[0m and \\033[31mred\\033[0m past the margin, "
          "%s\\n' $i \"$(printf 'x%.0s' $(seq 1 $((i * 3))))\"; i=$((i + 1)); done")

CASES = [
    {"name": "long lines narrowed and widened back, screen and history",
     "cmd": LONG, "agent": True,
     "steps": [("history",), ("resize", 50, 24), ("done", "FIDELITY-END"), ("history",),
               ("resize", 33, 24), ("done", "FIDELITY-END"), ("history",),
               ("resize", 80, 24), ("done", "FIDELITY-END"), ("history",),
               ("resize", 120, 24), ("done", "FIDELITY-END"), ("history",)]},
    # A row of background alone is not here: tmux's capture-pane leaves erased
    # cells out, coloured or not (it shows them); t_agents checks workrex's.
    {"name": "capture --screen and -e: attributes and colours, as tmux captures them",
     "cmd": sh("i=0; while [ $i -lt 30 ]; do printf 'history %d\\n' $i; i=$((i + 1)); done; "
               "printf '\\033[1;3;4:3;58:2::9:8:7mstyled\\033[0m \\033[38;2;1;2;3;48;5;200mrgb on 200"
               "\\033[0m \\033[2;53mdim over\\033[0m 中文 e\u0301\\n'"),
     "agent": True, "steps": [("capture",)]},
    {"name": "a shell prompt line wrapped, then narrower and wider",
     "cmd": sh("printf '$ %s' \"$(printf 'word%.0s ' $(seq 1 30))\""),
     "steps": [("resize", 37, 24), ("done", "FIDELITY-END"), ("resize", 80, 24),
               ("done", "FIDELITY-END")]},
    {"name": "lines erased to the margin in a colour, narrowed and widened",
     "cmd": sh("printf 'before\\n\\033[44mblue to the margin\\033[K\\033[0m\\nafter one\\n"
               "\\033[42m%s\\033[K\\033[0m\\nafter two\\n' \"$(printf 'long%.0s ' $(seq 1 11))\""),
     "steps": [("resize", 37, 24), ("done", "FIDELITY-END"), ("resize", 80, 24),
               ("done", "FIDELITY-END"), ("resize", 25, 24), ("done", "FIDELITY-END")]},
    {"name": "256-colour bars",
     "cmd": sh("i=0; while [ $i -lt 256 ]; do printf '\\033[48;5;%dm%3d\\033[0m' $i $i; "
               "[ $((i % 16)) = 15 ] && echo; i=$((i + 1)); done; "
               "i=0; while [ $i -lt 16 ]; do printf '\\033[38;5;%dmfg%d ' $i $i; i=$((i + 1)); "
               "done; printf '\\033[0m\\n'")},
    {"name": "24-bit colour bars",
     "cmd": sh("for c in r g b; do i=0; while [ $i -lt 256 ]; do "
               "case $c in r) s=\"$i;0;0\";; g) s=\"0;$i;0\";; b) s=\"0;0;$i\";; esac; "
               "printf '\\033[48;2;%sm \\033[0m' $s; i=$((i + 4)); done; echo; done; "
               "printf '\\033[38;2;18;52;86mfg 18 52 86\\033[0m \\033[38;2;1;2;3mnear black"
               "\\033[0m \\033[48;2;250;250;250;38;2;0;0;0mink\\033[0m\\n'")},
    {"name": "every SGR attribute",
     "cmd": sh("for a in 1 2 3 4 4:2 4:3 4:4 4:5 5 7 8 9 21 53 '1;2' '2;22' '4;24' "
               "'53;55' '3;23' '7;27' '9;29' '8;28'; do printf '\\033[%smSGR-%s\\033[0m ' "
               "\"$a\" \"$a\"; done; echo; "
               "printf '\\033[4;58:2::255:0:0mred underline\\033[0m "
               "\\033[4:3;58;5;46mgreen curly\\033[59m plain colour\\033[0m\\n'")},
    {"name": "CJK, emoji of several Unicode versions, combining sequences",
     "cmd": sh("printf '%s\\n' '中文字|' '😀 U6|' '🧑 U10 🧠|' '🟢 U12|' '🥲 U13|' '🫠 U14|' "
               "'e\u0301 a\u030a\u0301 o\u0308\u0301\u0323 three marks|' "
               "'a\u0301\u0302\u0303\u0304 four marks|' 'o\u0301\u0302\u0303\u0304\u0308 five|' "
               "'👍🏽 ☕ ⌚ ✅ \u2764\ufe0f ZWJ 👨\u200d👩\u200d👧|'")},
    # Newer than Debian 12's C library (Unicode 14): wide by workrex's own table.
    {"name": "Unicode 15 emoji and a mark, wide and narrow as the table says",
     "cmd": sh("printf '%s\\n' '\U0001fae8 shaking U15|' '\U0001fa77 \U0001fabc \U0001fadb three|' "
               "'\U0001f6dc wireless|' 'a\U00011f00 b mark|' "
               "\"$(printf '\U0001fae8%.0s' $(seq 1 45))\"")},
]

C_FILE = r'''cat > demo.c <<'X'
/* A file to look at: comments, strings, numbers, keywords. */
#include <stdio.h>

struct point { int x, y; };

static int area(const struct point *a, const struct point *b)
{
	int w = b->x - a->x, h = b->y - a->y; /* may be negative */
	return w * h > 0 ? w * h : -(w * h);
}

int main(void)
{
	struct point p = {1, 2}, q = {40, 17};
	printf("area %d, %s\n", area(&p, &q), "done");
	for (int i = 0; i < 3; i++)
		puts("\t中文 and ✓ in a string");
	return 0;
}
X
'''

CASES += [
    {"name": "vim with syntax highlighting",
     "cmd": C_FILE + "exec vim -u NONE -i NONE -N -n +'syntax on' +'set ruler ttimeout ttimeoutlen=10' demo.c",
     "done": r"return 0;",
     "steps": [("keys", [":set number", "Enter"]), ("done", r"^ +19 "),
               ("keys", ["/area", "Enter"]), ("done", r"area"),
               ("keys", ["G", "o", "x = 1", "Escape"]), ("done", r"x = 1")]},
    {"name": "less with colours, a search and the end",
     "cmd": "i=0; while [ $i -lt 100 ]; do printf '\\033[3%dmline %d\\033[0m of a file to page "
            "through\\n' $((i % 7 + 1)) $i; i=$((i + 1)); done > page.txt; "
            "exec less -R page.txt",
     "done": r"line 22 ",
     "steps": [("keys", ["/line 5", "Enter"]), ("done", r"^line 27 "),
               ("keys", ["G"]), ("done", r"\(END\)"),
               ("keys", ["g"]), ("done", r"line 0 ")]},
    {"name": "the colon colour form and its colour space",
     "cmd": sh("printf '\\033[38:2::255:128:0morange\\033[0m \\033[38:2:0:128:255mblue\\033[0m "
               "\\033[48:5:196mred\\033[0m \\033[38;2;10;20;30;48;2;200;210;220mboth\\033[0m\\n'")},
    {"name": "alternate screen by mode 47, 1047 and 1049",
     "cmd": sh("echo main one; echo main two; printf '\\033[?47hALT47'; sleep 0.2; "
               "printf '\\033[?47l'; printf '\\033[?1047hALT1047'; sleep 0.2; printf '\\033[?1047l'; "
               "printf '\\033[?1049h\\033[HALT1049'; sleep 0.2; printf '\\033[?1049l'; echo back")},
    {"name": "DECSC and DECRC keep the character sets",
     "cmd": sh("printf '\\033(0\\0337\\033(Bplain \\0338lqqk \\033(B text\\n'")},
]

RET = ("keys", ["Enter"])
PUSH = ("done", r"Push <RETURN>")


def autowrap_screen(cells, raw):
    """vttest 1's autowrap screen as vttest says it must look: the letters in order."""
    import fidelity
    rows = ["Test of autowrap, mixing control and print characters.",
            "The left/right margins should have letters in order:"]
    rows += ["%s%s%s" % (c, " " * 78, c.lower()) for c in "IJKLMNOPQRSTUVWXYZ"]
    rows += ["", "Push <RETURN>"]
    return fidelity.screen_of(rows)


def frame_132(cells, raw):
    """vttest 1's frame drawn for 132 columns on 80 (DECCOLM kept the width), as xterm draws it."""
    import copy, fidelity
    rows = copy.deepcopy(cells)
    for row in rows[2:22]:
        if len(row) >= 80 and row[79][0] == "*" and row[78][0] in " E":
            row[78] = ["+", fidelity.DEFAULT]
    return rows


FRAME_132 = ("done", r"Push <RETURN>",
             ("the right '+' border is drawn with CUB 1 after a '+' at the margin: xterm moves "
              "from the last column (CursorBack), tmux from one past it, so its '+'s land under "
              "the '*'s", frame_132))
AUTOWRAP = ("done", r"Push <RETURN>",
            ("where vttest mixes controls with text at the right margin, tmux 3.3 puts some "
             "letters on lines of their own; vttest's own statement (and xterm) keeps them in "
             "order at both margins", autowrap_screen))
CASES += [
    {"name": "vttest: cursor movements (1), autowrap, DECCOLM",
     "cmd": "exec vttest", "done": r"Enter choice number",
     "steps": [("keys", ["1", "Enter"]), PUSH, RET, FRAME_132, RET, AUTOWRAP,
               RET, AUTOWRAP, RET, PUSH, RET, PUSH]},
    {"name": "vttest: screen features (2)",
     "cmd": "exec vttest", "done": r"Enter choice number",
     "steps": [("keys", ["2", "Enter"]), PUSH, RET, PUSH, RET, PUSH, RET, PUSH, RET, PUSH,
               RET, PUSH, RET, PUSH]},
    {"name": "vttest: insert and delete (8)",
     "cmd": "exec vttest", "done": r"Enter choice number",
     "steps": [("keys", ["8", "Enter"]), PUSH, RET, PUSH, RET, PUSH, RET, PUSH, RET, PUSH]},
]
