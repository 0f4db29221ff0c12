#!/bin/sh
# make_matcher_fixtures.sh [HYPERSCAN_BUILD [VECTORSCAN_BUILD]]
# Compiles matcher.clf into matcher-hyperscan.bin and matcher-vectorscan.bin
# (test_matcher.c) with the classifyc of a build against each library
# (default build/ and build-vectorscan/: README.md, "Vectorscan"). Run it
# from the repository root after a change of the rules-file format, and
# commit both files.
set -eu
cd "$(dirname "$0")/../../.."
hs=${1:-build}
vs=${2:-build-vectorscan}
for pair in "hyperscan:$hs" "vectorscan:$vs"; do
    lib=${pair%%:*}
    dir=${pair#*:}
    version=$("$dir/cli/classifyc" --version)
    case $lib in
        hyperscan) echo "$version" | grep -q ", Hyperscan " ;;
        vectorscan) echo "$version" | grep -q ", Vectorscan " ;;
    esac || { echo "$dir/cli/classifyc is not a $lib build: $version" >&2; exit 1; }
    "$dir/cli/classifyc" --stdlib /nonexistent tests/unit/data/matcher.clf \
        -o "tests/unit/data/matcher-$lib.bin"
    echo "tests/unit/data/matcher-$lib.bin: $version"
done
