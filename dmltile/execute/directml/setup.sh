#!/bin/bash
# One-command set-up of the real DirectML.dll as dmltile's oracle and backend.
#
# Linux (Debian): Wine 8 (its d3d12 is vkd3d 1.6) over Mesa >= 25 lavapipe (software Vulkan), under Xvfb.
# What it does, each step skipped when already done:
#   1. apt-get install wine wine64 libwine xvfb xauth gcc-mingw-w64-x86-64 libvulkan1 libllvm15 unzip libwim15
#      (only when wine, xvfb-run, the mingw compiler or libwim15 is missing; needs root)
#   2. DirectML.dll out of Windows wheels on PyPI (fetch_dlls.py: the versions and the SHA-256 of each
#      wheel and DLL are pinned in feature_levels/directml_versions.toml), one folder per wheel
#   3. Mesa 25 lavapipe from bookworm-backports, extracted (dpkg -x) into a private folder, not installed
#   4. builds runner.c with mingw-w64 into runner.exe, and cabinet_shim.c into the runner's cabinet.dll;
#      decodes the compressed shaders of DirectML <= 1.7 for it (shader_blobs.py: zlib, and libwim15 for LZMS)
#   5. creates the Wine prefix, then records each DLL's FileVersion and max feature level (versions.json)
#   6. onnxruntime.dll out of the same wheels (where they ship it; a pinned wheel that should and does not
#      stops the set-up), ort_runner.c built into ort_runner.exe, and a Tile run on each wheel's provider
#      (the set-up fails when one cannot)
# Everything downloaded or built goes under ONE folder:
#   $DMLTILE_DIRECTML_HOME (default ${XDG_CACHE_HOME:-$HOME/.cache}/dmltile/directml)
# Usage: setup.sh [default | all | DirectML version | package==version | onnxruntime-directml version ...]
#        (default: $DMLTILE_DIRECTML_VERSIONS, else the table's rows marked default = true)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
H=${DMLTILE_DIRECTML_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/dmltile/directml}
VERSIONS=${*:-${DMLTILE_DIRECTML_VERSIONS:-default}}
PY=${PYTHON:-python3}
mkdir -p "$H"
T0=$(date +%s.%N)
step() { awk -v a="$(now)" -v b="$2" -v n="$1" 'BEGIN { printf "  %-40s %6.1f s\n", n, a - b }'; }
now() { date +%s.%N; }

# No `producer | grep -q`: under pipefail, grep's early exit kills the producer with SIGPIPE and the
# pipeline reads as false at random. Outputs are captured whole and matched instead.
# 1. system packages -------------------------------------------------------------------------------
t=$(now)
if [ "$(uname -s)" != Linux ]; then echo "setup.sh is for Linux; on Windows build runner.c with mingw or MSVC (see README)"; exit 2; fi
if ! command -v wine >/dev/null || ! command -v xvfb-run >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null \
   || ! command -v unzip >/dev/null || [[ "$(ldconfig -p)" != *"libwim.so.15 "* ]]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends wine wine64 libwine \
    gcc-mingw-w64-x86-64 xvfb xauth libvulkan1 libllvm15 unzip libwim15 >/dev/null
fi
step "system packages (apt)" "$t"

# 2. DirectML.dll from Windows wheels, hashes checked ---------------------------------------------------
t=$(now)
# shellcheck disable=SC2086
"$PY" "$HERE/fetch_dlls.py" "$H" $VERSIONS
step "DirectML.dll ($VERSIONS)" "$t"

# 3. Mesa >= 25 lavapipe in a private folder --------------------------------------------------------
t=$(now)
if [ ! -f "$H/lvp.json" ]; then
  rm -rf "$H/apt" "$H/debs" "$H/mesa"
  mkdir -p "$H/apt/lists/partial" "$H/apt/cache/archives/partial" "$H/debs" "$H/mesa"
  uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 ~ /^bookworm/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm-backports main" > "$H/apt/sources.list"
  A=(-o "Dir::Etc::SourceList=$H/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o "Dir::State::Lists=$H/apt/lists" -o "Dir::Cache=$H/apt/cache" -o APT::Sandbox::User=root)
  apt-get -qq "${A[@]}" update
  (cd "$H/debs" && apt-get -qq "${A[@]}" download mesa-vulkan-drivers/bookworm-backports \
     libdrm2/bookworm-backports libdrm-amdgpu1/bookworm-backports)
  for f in "$H"/debs/*.deb; do dpkg -x "$f" "$H/mesa"; done
  "$PY" - "$H" <<'PY'
import json, sys
h = sys.argv[1]
icd = json.load(open(f"{h}/mesa/usr/share/vulkan/icd.d/lvp_icd.json"))
icd["ICD"]["library_path"] = f"{h}/mesa/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
json.dump(icd, open(f"{h}/lvp.json.tmp", "w"))
PY
  mv "$H/lvp.json.tmp" "$H/lvp.json"
  rm -rf "$H/apt" "$H/debs"
fi
step "Mesa 25 lavapipe (backports)" "$t"

# 4. the runner --------------------------------------------------------------------------------------
t=$(now)
if [ ! -f "$H/runner.exe" ] || [ "$HERE/runner.c" -nt "$H/runner.exe" ] || [ "$HERE/dml_types.h" -nt "$H/runner.exe" ] || [ "$HERE/json_lines.h" -nt "$H/runner.exe" ] || [ "$HERE/file_version.h" -nt "$H/runner.exe" ]; then
  x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -Wno-cast-function-type -static -s \
    -o "$H/runner.exe.tmp" "$HERE/runner.c" -I"$HERE" -ld3d12 -ldxgi -lversion
  mv "$H/runner.exe.tmp" "$H/runner.exe"
fi
step "runner.exe (mingw-w64)" "$t"
t=$(now)
if [ ! -f "$H/cabinet.dll" ] || [ "$HERE/cabinet_shim.c" -nt "$H/cabinet.dll" ]; then
  x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -shared -s \
    -o "$H/cabinet.dll.tmp" "$HERE/cabinet_shim.c" "$HERE/cabinet_shim.def"
  mv "$H/cabinet.dll.tmp" "$H/cabinet.dll"
fi
for d in "$H"/dll/*/; do  # DirectML <= 1.7 imports Cabinet.dll for its compressed shaders
  if [ ! -f "$d/shader-blobs.done" ] && grep -qai 'cabinet\.dll' "$d/DirectML.dll"; then
    "$PY" "$HERE/shader_blobs.py" "$H/shader-blobs" "$d/DirectML.dll"
    touch "$d/shader-blobs.done"
  fi
done
step "cabinet.dll + shader blobs (DirectML <= 1.7)" "$t"

# 5. Wine prefix and the version table ----------------------------------------------------------------
t=$(now)
cat > "$H/env.sh" <<EOT
export WINEPREFIX=$H/prefix WINEDEBUG=-all VKD3D_DEBUG=none XDG_RUNTIME_DIR=$H/xdg
export VK_ICD_FILENAMES=$H/lvp.json LD_LIBRARY_PATH=$H/mesa/usr/lib/x86_64-linux-gnu
export WINEDLLOVERRIDES=cabinet=n,b
EOT
mkdir -p "$H/xdg" && chmod 700 "$H/xdg"
if [ ! -f "$H/prefix/system.reg" ]; then
  ( . "$H/env.sh"; wineboot -i >/dev/null 2>&1; wineserver -w )  # the display-less wineserver must exit first
fi
step "Wine prefix" "$t"
t=$(now)
DMLTILE_DIRECTML_HOME="$H" "$PY" "$HERE/standalone.py" record-versions
step "version table (versions.json)" "$t"
# 6. onnxruntime-directml itself: onnxruntime.dll per wheel (the C API with the DirectML provider) --
#    and ort_runner.exe, which drives it. Wheels that ship no onnxruntime.dll get a note saying so.
t=$(now)
# The onnxruntime-directml wheels of the version table (each checked against its pinned SHA-256; the
# DirectML step above already extracted the ones it downloaded, so only the others are downloaded).
ORT_VERSIONS=${DMLTILE_ORT_VERSIONS:-"1.24.4 1.20.1 1.18.0 1.17.3 1.15.1 1.14.1 1.13.1 1.10.0 1.9.0"}
# shellcheck disable=SC2086
"$PY" "$HERE/fetch_dlls.py" --onnxruntime "$H" $ORT_VERSIONS
if [ ! -f "$H/ort_runner.exe" ] || [ "$HERE/ort_runner.c" -nt "$H/ort_runner.exe" ] || [ "$HERE/json_lines.h" -nt "$H/ort_runner.exe" ] || [ "$HERE/file_version.h" -nt "$H/ort_runner.exe" ]; then
  x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -Wno-cast-function-type -static -s \
    -o "$H/ort_runner.exe.tmp" "$HERE/ort_runner.c" -I"$HERE" -lversion
  mv "$H/ort_runner.exe.tmp" "$H/ort_runner.exe"
fi
DMLTILE_DIRECTML_HOME="$H" "$PY" "$HERE/ort_provider.py" record-info
# a provider that starts is not yet one that runs: each wheel runs a Tile on it, or the set-up fails
DMLTILE_DIRECTML_HOME="$H" "$PY" "$HERE/ort_provider.py" check-tile \
  || { echo "onnxruntime-directml's DirectML provider cannot run a Tile here (above); see \`dmltile doctor\`" >&2; exit 1; }
step "onnxruntime-directml runner + onnxruntime.dll" "$t"
awk -v a="$(now)" -v b="$T0" -v h="$H" 'BEGIN { printf "ready: %s  (%.1f s in all)\n", h, a - b }'
