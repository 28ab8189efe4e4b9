#!/bin/sh
# Usage: scripts/godoc-counts.sh [repo root]
# Per library package (outside cmd/, bench/, internal/) in every module:
# import path, lines of `go doc -short`, and declarations in `go doc -all`
# (func/method/type/const/var lines at column 0, methods included).
cd "${1:-.}"
for m in . toolsets/data handle/redisstore; do
  (cd $m && go list -f '{{.ImportPath}} {{.Dir}}' ./... | grep -v -e '/cmd/' -e '/bench' -e '/internal/' -e '/internal ' | while read p d; do
    echo "$p $(cd $d && go doc -short . 2>/dev/null | wc -l) $(cd $d && go doc -all . 2>/dev/null | grep -cE '^(func|type|const|var) ')"; done)
done
