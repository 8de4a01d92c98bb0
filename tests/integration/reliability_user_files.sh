# issue 18 item 1, the files named by a user: logs, traces, configs,
# signature and alias tables, --meta files, history imports.  A FIFO
# (without a writer), a socket and a device are refused at once with exit
# 2 and a message naming the file and what it is, and (where strace works)
# none of them is ever opened for reading: only an O_PATH descriptor
# looks at them.
. "$(dirname "$0")/../lib.sh"
S=$SCHEDMATE
mkfifo "$SM_TMP/fifo.log"
command -v python3 >/dev/null && python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$SM_TMP/sock.log"
R="$SM_TMP/repo"
mkdir -p "$R"
printf 'import torch\n' >"$R/train.py"
kinds="fifo.log"
[ -S "$SM_TMP/sock.log" ] && kinds="$kinds sock.log"
ln -s /dev/zero "$SM_TMP/zero.log"
kinds="$kinds zero.log"
for k in $kinds; do
  F="$SM_TMP/$k"
  for cmd in "track $F" "diagnose $F" "diagnose --signatures $F $R/train.py" \
             "simulate --trace $F --policy fifo" \
             "history import --db $SM_TMP/h.db $F" \
             "advise --db $SM_TMP/h.db --meta $F" \
             "extract --aliases $F --repo $R -- python train.py"; do
    # shellcheck disable=SC2086
    expect_rc 2 timeout 20 $S $cmd
    grep -qE "(FIFO|socket|device)" "$SM_TMP/last.err" \
      || fail "$cmd: $(cat "$SM_TMP/last.err")"
    grep -q "$k" "$SM_TMP/last.err" || fail "$cmd: the message does not name $k"
  done
done
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
  for k in $kinds; do
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
      strace -f -qq -e trace=open,openat,openat2 -o "$SM_TMP/trace" \
      $S track "$SM_TMP/$k" >/dev/null 2>&1 || true
    # The only opens of the path: O_PATH.
    bad=$(grep -F "$k" "$SM_TMP/trace" | grep -v O_PATH || true)
    [ -z "$bad" ] || { echo "$bad"; fail "$k was opened for I/O"; }
    grep -F "$k" "$SM_TMP/trace" | grep -q O_PATH || fail "no O_PATH look at $k"
  done
  echo "strace: none opened for I/O"
fi
echo ok
