#!/usr/bin/env bash
# Checks that every C++ source and header of the repository is formatted as .clang-format
# says (Google style, 100 columns). Prints the files that are not and exits non-zero.
# Fix them with: clang-format -i $(git ls-files '*.cc' '*.h')
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
files=$(git ls-files '*.cc' '*.h')
bad=""
for f in $files; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -n "$bad" ]; then
  echo "== format: not formatted as .clang-format says (clang-format -i FILE fixes it):"
  for f in $bad; do echo "  $f"; done
  exit 1
fi
echo "== format: $(echo "$files" | wc -w) files formatted"
