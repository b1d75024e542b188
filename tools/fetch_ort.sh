#!/usr/bin/env bash
# fetch_ort.sh DEST — ONNX Runtime's C headers and libonnxruntime.so.1 for hipdnn-ep and its
# tests, from npm (the only registry that carries both here), pinned and checked.
#
#   headers  @qvac/onnx@0.15.1          package/prebuilds/include/onnxruntime/ (ORT_API_VERSION 24)
#   library  onnxruntime-node@1.30.0    package/bin/napi-v6/linux/x64/libonnxruntime.so.1
#   oldest   onnxruntime-node@1.24.1    the same file: the oldest ORT hipdnn-ep supports, whose
#                                       node tests run too (tests/test_ort_ep_versions.py)
#
# Everything is built against the one header set above (the newest on npm); the oldest
# runtime is only loaded in its place (LD_LIBRARY_PATH) by the tests.
# The tarballs are downloaded once into ${HIPDNN_CACHE:-$HOME/.cache/hipdnn}/ort/ and
# checked against the sha256 sums below on every run (a mismatch deletes the cached file
# and fails); only the two pieces above are extracted, into DEST, never into the source
# tree.  On success it prints two lines, `include=<dir>` and `library=<path>`, and exits 0;
# on any failure it prints one line saying what failed on stderr and exits 1.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 DEST" >&2
    exit 2
fi
dest=$1
cache=${HIPDNN_CACHE:-$HOME/.cache/hipdnn}/ort

HEADERS_PKG=@qvac/onnx@0.15.1
HEADERS_TGZ=qvac-onnx-0.15.1.tgz
HEADERS_SHA256=ff52c079d281510e58d350d0cb5132012a9fcf455e29a181c452f9ce5f654b35
HEADERS_DIR=package/prebuilds/include/onnxruntime
LIB_PKG=onnxruntime-node@1.30.0
LIB_TGZ=onnxruntime-node-1.30.0.tgz
LIB_SHA256=6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75
LIB_FILE=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
OLD_VERSION=1.24.1
OLD_PKG=onnxruntime-node@$OLD_VERSION
OLD_TGZ=onnxruntime-node-$OLD_VERSION.tgz
OLD_SHA256=57181cf6e6e711b155c5b942d591fd63ded0b5de5c4922d51fd994e7f6ac2772

fail() {
    echo "fetch_ort.sh: $*" >&2
    exit 1
}

[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] ||
    fail "only linux x86_64 is fetched (this is $(uname -s)-$(uname -m))"

# Downloads PKG as TGZ into the cache unless there, then checks its sum.
fetch() {
    local pkg=$1 tgz=$2 sum=$3
    mkdir -p "$cache"
    if [ ! -f "$cache/$tgz" ]; then
        command -v npm >/dev/null || fail "npm not found (apt-get install npm), needed to fetch $pkg"
        local tmp
        tmp=$(mktemp -d "$cache/.pack.XXXXXX")
        if ! (cd "$tmp" && npm pack --silent "$pkg" >/dev/null 2>"$tmp/npm.log"); then
            local why
            why=$(tail -n 3 "$tmp/npm.log" | tr '\n' ' ')
            rm -rf "$tmp"
            fail "npm pack $pkg failed: $why"
        fi
        [ -f "$tmp/$tgz" ] || { rm -rf "$tmp"; fail "npm pack $pkg did not give $tgz"; }
        mv "$tmp/$tgz" "$cache/$tgz"
        rm -rf "$tmp"
    fi
    local got
    got=$(sha256sum "$cache/$tgz" | cut -d' ' -f1)
    if [ "$got" != "$sum" ]; then
        rm -f "$cache/$tgz"
        fail "$cache/$tgz: sha256 $got, expected $sum (removed; run again to download it anew)"
    fi
}

fetch "$HEADERS_PKG" "$HEADERS_TGZ" "$HEADERS_SHA256"
fetch "$LIB_PKG" "$LIB_TGZ" "$LIB_SHA256"
fetch "$OLD_PKG" "$OLD_TGZ" "$OLD_SHA256"

# Extracted afresh when the stamp does not name these exact tarballs.
stamp="$dest/.fetched"
want_stamp="$HEADERS_SHA256 $LIB_SHA256 $OLD_SHA256"
old_dir="$dest/lib-$OLD_VERSION"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want_stamp" ] ||
   [ ! -f "$dest/include/onnxruntime_ep_c_api.h" ] || [ ! -f "$dest/lib/libonnxruntime.so.1" ] ||
   [ ! -f "$old_dir/libonnxruntime.so.1" ]; then
    rm -rf "$dest/include" "$dest/lib" "$dest"/lib-* "$dest/.x"
    mkdir -p "$dest/.x" "$dest/lib" "$dest/.x/old" "$old_dir"
    tar -xzf "$cache/$HEADERS_TGZ" -C "$dest/.x" "$HEADERS_DIR" ||
        fail "could not extract $HEADERS_DIR from $HEADERS_TGZ"
    tar -xzf "$cache/$LIB_TGZ" -C "$dest/.x" "$LIB_FILE" ||
        fail "could not extract $LIB_FILE from $LIB_TGZ"
    mv "$dest/.x/$HEADERS_DIR" "$dest/include"
    mv "$dest/.x/$LIB_FILE" "$dest/lib/libonnxruntime.so.1"
    tar -xzf "$cache/$OLD_TGZ" -C "$dest/.x/old" "$LIB_FILE" ||
        fail "could not extract $LIB_FILE from $OLD_TGZ"
    mv "$dest/.x/old/$LIB_FILE" "$old_dir/libonnxruntime.so.1"
    ln -sf libonnxruntime.so.1 "$dest/lib/libonnxruntime.so"
    rm -rf "$dest/.x"
    echo "$want_stamp" > "$stamp"
fi
grep -q '^#define ORT_API_VERSION 24$' "$dest/include/onnxruntime_c_api.h" ||
    fail "$dest/include/onnxruntime_c_api.h is not ORT_API_VERSION 24"
echo "include=$dest/include"
echo "library=$dest/lib/libonnxruntime.so.1"
echo "oldest=$old_dir/libonnxruntime.so.1"
