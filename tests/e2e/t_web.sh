#!/usr/bin/env bash
# The web view (workrex web) in a real Chromium over WebDriver: pairing,
# the live list, a pane's text and colours, answers, notifications, a
# phone's width; and its doors: Host, Origin, tokens, a hostile pane.
. "$(dirname "$0")/lib.sh"

git_env
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$E2E_TMP/bin"
ln -sf "$WORKREX" "$E2E_TMP/bin/workrex"
export PATH="$E2E_TMP/bin:$PATH" WORKREX
for tool in chromium chromedriver curl; do
	command -v "$tool" >/dev/null || { echo "not ok - $tool is required but not installed"; exit 1; }
done

web_out=$E2E_TMP/web.out
# start_web [ARGS]: workrex web on a free loopback port; $url is its link, $base the server.
start_web() {
	stop_web
	# Emptied here, not by the background start: the wait below must not read the last one's.
	: >"$web_out"
	(cd "$repo" && exec "$WORKREX" web --listen 127.0.0.1:0 "$@") >"$web_out" 2>&1 &
	web_pid=$!
	echo "$web_pid" >"$E2E_TMP/web.pid"
	until_ok 10 grep -q '^web: http' "$web_out"
	url=$(sed -n 's/^web: //p' "$web_out" | head -1)
	base=${url%%/#*}
	token=${url##*token=}
}
stop_web() {
	local pid
	pid=$(cat "$E2E_TMP/web.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	rm -f "$E2E_TMP/web.pid"
}
# A test that failed: what the server said.
trap '[ "$FAILED" = 0 ] || cat "$web_out" 2>/dev/null; stop_web; stop' EXIT

# Agents with the stand-in, with no dashboard: the web view is theirs alone.
add_agents() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<YAML
agents:
  stand:
    command: python3
    args: ["$here/web_agent.py"]
  evil:
    command: python3
    args: ["$here/web_agent.py", "hostile"]
  keys:
    command: python3
    args: ["$here/show_input.py"]
  shell:
    command: bash
    args: ["--norc", "--noprofile"]
${WEB_CONFIG:-}
YAML
	local h
	for h in "$@"; do
		wrx add "$h" -a "${h/#a[0-9]/stand}" -b >/dev/null
	done
}

t_web_in_a_browser() {
	make_repo
	add_agents a1 a2 a3
	start_web
	python3 "$here/web_browser.py" use "$url" "$repo"
	python3 "$here/web_browser.py" phone "$url"
	stop_web
}

# status code of a request to the server: code ARGS...
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true; }

t_web_doors() {
	make_repo
	add_agents a1
	start_web
	[ "$(code "$base/")" = 200 ]
	# DNS rebinding: a name that is not this server's.
	[ "$(code -H 'Host: attacker.example:7681' "$base/")" = 403 ]
	[ "$(code -H 'Host: attacker.example' "$base/pair" -H "Authorization: Bearer $token")" = 403 ]
	# Pairing: a wrong token, none, the right one.
	local wrong=${token%?}0
	[ "$wrong" != "$token" ] || wrong=${token%?}1
	[ "$(code -H "Authorization: Bearer $wrong" "$base/pair")" = 403 ]
	[ "$(code "$base/pair")" = 403 ]
	cookie=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $token" "$base/pair" |
		sed -n 's/^set-cookie: \([^;]*\);.*/\1/p')
	[ -n "$cookie" ]
	curl -s -D - -o /dev/null -H "Authorization: Bearer $token" "$base/pair" |
		grep -q 'HttpOnly; SameSite=Strict'
	ws() { python3 "$here/web_ws.py" "$base" "$@"; }
	# The WebSocket: with the cookie and this Origin; not from another site,
	# not without the cookie, not with a foreign Host.
	ws --cookie "$cookie" --expect agents
	ws --cookie "$cookie" --origin http://attacker.example --expect refused
	ws --expect refused
	ws --cookie "$cookie" --host attacker.example --expect refused
	# Revoked: the old token and the old cookie are refused, in the running server.
	wrx web --revoke | grep -q 'refused now'
	[ "$(code -H "Authorization: Bearer $token" "$base/pair")" = 403 ]
	ws --cookie "$cookie" --expect refused
	stop_web
	# Not loopback without TLS: refused, saying why.
	not wrx web --listen 0.0.0.0:0 2>"$E2E_TMP/err"
	grep -q 'not loopback' "$E2E_TMP/err"
}

t_web_hostile_pane() {
	make_repo
	add_agents evil
	start_web
	python3 "$here/web_browser.py" hostile "$url"
	stop_web
}

t_web_unpaired_and_flood() {
	make_repo
	add_agents a1
	start_web
	python3 "$here/web_browser.py" unpaired "$base/"
	# 10,000 bad requests, then the server still answers and its log is small.
	python3 "$here/web_ws.py" "$base" --flood 10000
	[ "$(code -H "Authorization: Bearer $token" "$base/pair")" = 429 ] # wrong tokens rate-limited
	[ "$(code "$base/app.js")" = 200 ]
	size=$(stat -c %s "$XDG_STATE_HOME/workrex/workrex.log" 2>/dev/null || echo 0)
	[ "$size" -lt 1000000 ]
	stop_web
}

# web.listen: the dashboard serves the page from its own loop, and stops with it.
t_web_from_the_dashboard() {
	make_repo
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	WEB_CONFIG="web:
  listen: 127.0.0.1:$port
clipboard:
  host_panes: ask
notify:
  mode: bell
  command: [sh, -c, 'echo \"\$WORKREX_HANDLE \$WORKREX_STATUS \$WORKREX_TEXT\" >>$E2E_TMP/pushed']" add_agents a1
	start_repo 120 36
	tm set -g set-clipboard on
	tm set-buffer before
	wait_for "web: http://127.0.0.1:$port/ serves the agents"
	url=$(wrx web --link | sed -n 's/^web: //p')
	[[ $url == "http://127.0.0.1:$port/#token="* ]]
	# a status the dashboard holds (its bridge heard the agent) reaches the page
	python3 "$here/web_browser.py" status "$url" "$repo" a1 y done
	# notify.command ran for it, for a push when no page is open.
	# (once in 2 s an agent: its waiting, or its done)
	until_ok 5 grep -qxE 'a1 (waiting waiting|done done)' "$E2E_TMP/pushed"
	# The dashboard's own question (a pane's clipboard write) answered on the
	# page, in C-b a's words: yes sets the clipboard; then one answered no.
	local b64
	b64=$(printf from-web | base64 -w0)
	type_line "printf '\\033]52;c;$b64\\a'"
	wait_for 'a question waits: C-b a to answer - .*sets the clipboard to "from-web"'
	python3 "$here/web_browser.py" answer "$url" 'sets the clipboard to "from-web" (8 bytes). Allow?' yes
	until_ok 5 eval '[ "$(tm show-buffer)" = from-web ]'
	wait_gone 'a question waits'
	b64=$(printf not-this | base64 -w0)
	type_line "printf '\\033]52;c;$b64\\a'"
	wait_for 'a question waits: C-b a to answer - .*"not-this"'
	python3 "$here/web_browser.py" answer "$url" '"not-this"' no
	wait_gone 'a question waits'
	[ "$(tm show-buffer)" = from-web ]
	# 10,000 bad requests at the dashboard's port (wrong tokens among them):
	# the dashboard still answers keys, a paired page still connects (only
	# pairing waits out the minute), the log stays small.
	base=http://127.0.0.1:$port token=${url##*token=}
	pair
	python3 "$here/web_ws.py" "$base" --flood 10000
	type_line 'echo still-here'
	wait_for '^.*│still-here'
	python3 "$here/web_ws.py" "$base" --cookie "$cookie" --expect agents
	[ "$(code -H "Authorization: Bearer $token" "$base/pair")" = 429 ]
	[ "$(stat -c %s "$XDG_STATE_HOME/workrex/workrex.log")" -lt 1000000 ]
	# The QR code of the link, on a terminal.
	script -qc "cd '$repo' && '$WORKREX' web --link" /dev/null >"$E2E_TMP/qr"
	[ "$(grep -c '█' "$E2E_TMP/qr")" -gt 10 ]
	prefix d
	until_ok 10 not curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"
}

# pair: the cookie for the running server's token ($cookie).
pair() {
	cookie=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $token" "$base/pair" |
		sed -n 's/^set-cookie: \([^;]*\);.*/\1/p')
	[ -n "$cookie" ]
}

t_web_read_only() {
	make_repo
	add_agents a1
	start_web --read-only
	grep -q 'read-only' "$web_out"
	pair
	local w="python3 $here/web_ws.py $base --cookie $cookie"
	$w --say '{"t":"view","pane":null}' --want '"read_only":true'
	$w --say '{"t":"send","id":1,"handle":"a1","text":"rm -rf ~"}' --want '"error":"this view is read-only"'
	$w --say '{"t":"merge","id":2,"handle":"a1"}' --want '"error":"this view is read-only"'
	$w --say '{"t":"comment","id":3,"handle":"a1","file":"a.txt","text":"x"}' --want 'read-only'
	# What it may do: read a diff. An agent that is not one: refused.
	$w --say '{"t":"diff","id":4,"handle":"a1","mode":"branch"}' --want '"t":"diff"'
	$w --say '{"t":"diff","id":5,"handle":"../x","mode":"branch"}' --want 'no such agent'
	$w --say 'not json at all' --want '"t":"agents"'
	stop_web
	not grep -q 'rm -rf' <(wrx capture a1)
}

t_web_tls() {
	make_repo
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
		-keyout "$E2E_TMP/key.pem" -out "$E2E_TMP/cert.pem" 2>/dev/null
	WEB_CONFIG="web:
  tls_cert: $E2E_TMP/cert.pem
  tls_key: $E2E_TMP/key.pem" add_agents a1
	start_web
	[[ $url == https://127.0.0.1:* ]]
	# HTTPS only; the cookie Secure.
	[ "$(code --cacert "$E2E_TMP/cert.pem" --resolve "localhost:${base##*:}:127.0.0.1" \
		"https://localhost:${base##*:}/")" = 200 ]
	[ "$(code "http://127.0.0.1:${base##*:}/")" != 200 ]
	curl -s -k -D - -o /dev/null -H "Authorization: Bearer $token" "$base/pair" |
		grep -q 'HttpOnly; SameSite=Strict; Secure'
	stop_web
	# Not loopback, with TLS: allowed.
	(cd "$repo" && timeout 3 "$WORKREX" web --listen 0.0.0.0:0 >"$E2E_TMP/any.out" 2>&1) || true
	grep -q '^web: https://0.0.0.0:' "$E2E_TMP/any.out"
}

# Escape on the page, and send-keys from the command line, reach the program as keys.
t_web_escape_and_send_keys() {
	make_repo
	add_agents keys
	start_web
	python3 "$here/web_browser.py" escape "$url"
	# In order, one request each (the program reads them at once, as one).
	wrx send-keys keys Up x Enter
	until_ok 10 eval 'wrx capture keys | grep -qF "GOT[\\x1b[Ax\\r]"'
	not wrx send-keys keys F13 2>"$E2E_TMP/err"
	grep -q "no key 'F13'" "$E2E_TMP/err"
	stop_web
}

# workrex web beside a dashboard it is not: the dashboard's questions come
# through the agents' keepers, and an answer goes back by workrex answer.
t_web_questions_beside_the_dashboard() {
	make_repo
	WEB_CONFIG="clipboard:
  host_panes: ask" add_agents
	start_repo 120 36
	tm set -g set-clipboard on
	tm set-buffer before
	wait_for 'wrx\$'
	wrx add sh1 -a shell -b >/dev/null
	wait_for '^ 2 sh1'
	start_web
	local b64
	b64=$(printf from-beside | base64 -w0)
	wrx send sh1 "printf '\\033]52;c;$b64\\a'"
	wait_for 'a question waits: C-b a to answer - .*"from-beside"'
	python3 "$here/web_browser.py" answer "$url" '"from-beside"' yes
	until_ok 5 eval '[ "$(tm show-buffer)" = from-beside ]'
	wait_gone 'a question waits'
	# Answered already: refused; and with no dashboard, nothing asks.
	not wrx answer 1 yes 2>"$E2E_TMP/err"
	grep -q 'no question 1 waits' "$E2E_TMP/err"
	prefix d
	wait_for 'WORKREX-EXITED'
	not wrx answer 1 yes 2>"$E2E_TMP/err"
	grep -q 'no dashboard is running' "$E2E_TMP/err"
	stop_web
}

run_test "web: pair, list, status, pane, answer, notify, phone" t_web_in_a_browser
run_test "web: Host, Origin, tokens, cookies, revoke, listen" t_web_doors
run_test "web: a hostile pane's markup stays text" t_web_hostile_pane
run_test "web: unpaired page; 10,000 bad requests" t_web_unpaired_and_flood
run_test "web: Esc on the page; send-keys" t_web_escape_and_send_keys
run_test "web: --read-only refuses what types or merges" t_web_read_only
run_test "web: TLS with web.tls_cert and web.tls_key" t_web_tls
run_test "web: the dashboard's questions beside it, answered" t_web_questions_beside_the_dashboard
run_test "web: served by the dashboard (web.listen), gone with it" t_web_from_the_dashboard
