# The demo's reports as a person sees them: `make demo`'s commands are run
# into a scratch directory, and headless Chromium opens every HTML report
# it writes, takes a screenshot and must log no console message (errors,
# failed loads); the screenshot must show a drawn page (not one colour),
# and the page Chromium parsed must hold every plot of the file.  Skipped
# (exit 77) where Chromium is not installed (scripts/deps.sh installs it
# for `make test`).
. "$(dirname "$0")/../lib.sh"
B=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$B" ] || skip "chromium not installed (scripts/deps.sh installs it for make test)"
[ -x build/schedmate ] || skip "build/schedmate not built (make)"
DEMO_OUT=$SM_TMP/demo scripts/demo.sh > $SM_TMP/demo.log 2>&1 || { tail -20 $SM_TMP/demo.log; fail "demo"; }
n=0
for f in $SM_TMP/demo/*.html; do
  name=$(basename "$f" .html)
  prof=$SM_TMP/chromium-$name
  flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
         --disable-component-update --disable-sync --no-first-run
         --user-data-dir="$prof" --enable-logging=stderr --v=0)
  timeout 120 "$B" "${flags[@]}" --window-size=1200,3000 \
    --screenshot="$SM_TMP/$name.png" "file://$f" > "$SM_TMP/$name.log" 2>&1 \
    || { tail -5 "$SM_TMP/$name.log"; fail "$name: chromium failed"; }
  if grep -q 'CONSOLE' "$SM_TMP/$name.log"; then
    grep 'CONSOLE' "$SM_TMP/$name.log" | head -5; fail "$name: console messages"
  fi
  python3 - "$SM_TMP/$name.png" <<'PY' || fail "$name: blank or broken screenshot"
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n'
w, h = struct.unpack('>II', d[16:24])
bpp = {2: 3, 6: 4}[d[25]]
idat, p = b'', 8
while p < len(d):
    n, = struct.unpack('>I', d[p:p + 4]); t = d[p + 4:p + 8]
    if t == b'IDAT': idat += d[p + 8:p + 8 + n]
    p += 12 + n
raw = zlib.decompress(idat)
assert w >= 800 and h >= 1000, (w, h)
# Distinct scanlines: a page of text, tables and plots has many.
rows = {raw[i:i + 1 + w * bpp] for i in range(0, len(raw), 1 + w * bpp)}
assert len(rows) > 200, len(rows)
PY
  timeout 120 "$B" "${flags[@]}" --dump-dom "file://$f" > "$SM_TMP/$name.dom" 2> /dev/null \
    || fail "$name: no DOM"
  want=$(grep -o '<svg xmlns' "$f" | wc -l)
  got=$(grep -o '<svg xmlns' "$SM_TMP/$name.dom" | wc -l)
  [ "$want" -ge 3 ] && [ "$got" = "$want" ] || fail "$name: $got of $want plots parsed"
  grep -q '<h1>' "$SM_TMP/$name.dom" || fail "$name: no heading"
  n=$((n + 1))
done
[ $n -ge 4 ] || fail "only $n demo reports"
echo "$n demo reports rendered without console messages"
