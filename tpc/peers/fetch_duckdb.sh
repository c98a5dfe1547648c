#!/usr/bin/env bash
# tpc/peers/fetch_duckdb.sh - puts DuckDB's libduckdb.so (C API) under
# .peers/duckdb/ (ignored by git) for the benchmarks' DuckDB peer.
#
# The npm package @duckdb/node-bindings-linux-x64 ships libduckdb.so;
# `npm pack` fetches the tarball without installing anything.  Set
# DUCKDB_NPM_VERSION to pin a version (default: the newest).  The library
# is found by the benchmarks at .peers/duckdb/libduckdb.so, or wherever
# GPMDB_DUCKDB_LIB points.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.peers/duckdb
pkg=@duckdb/node-bindings-linux-x64${DUCKDB_NPM_VERSION:+@$DUCKDB_NPM_VERSION}
if ! command -v npm >/dev/null; then
	echo "fetch_duckdb: npm is not installed (apt-get install npm)" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg" >/dev/null)
tgz=$(ls "$tmp"/*.tgz)
tar -xzf "$tgz" -C "$tmp" package/libduckdb.so package/package.json package/LICENSE
mkdir -p "$dest"
mv "$tmp/package/libduckdb.so" "$dest/libduckdb.so.new"
mv "$dest/libduckdb.so.new" "$dest/libduckdb.so"
cp "$tmp/package/LICENSE" "$dest/LICENSE"
cp "$tmp/package/package.json" "$dest/package.json"
ver=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$dest/package.json")
echo "fetch_duckdb: $dest/libduckdb.so ($(basename "$tgz"), npm version $ver)"
