#!/usr/bin/env bash
# Install everything the tests need, then run them. The README's test command and CI's (.ci/run)
# are this script, so what a newcomer runs and what CI runs cannot drift apart.
#
#   bash tests/run.sh [PYTEST ARGS...]      e.g. bash tests/run.sh -m "not real and not browser"
#
# Debian packages come from apt-get: directly as root, through sudo otherwise; the script stops with
# the list of packages when it can do neither. Packages already installed are not asked for again,
# so a second run goes straight to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each package is for (the pytest markers in pyproject.toml say which tests need which):
#   dwarves (pahole) and gdb: the references struct layouts are compared with ("compilers")
#   universal-ctags: the baseline of C++, Rust and Go definition recall ("compilers")
#   protobuf-compiler, protobuf-compiler-grpc, libprotobuf-dev: protoc and its gRPC plugin generate
#     the *.pb.h a tree builds from its .proto files, so struct probes can include them ("compilers")
#   g++-aarch64-linux-gnu, g++-powerpc64le-linux-gnu, g++-s390x-linux-gnu: lay out headers written
#     for ARM, POWER and IBM Z (vLLM's cpu_types_{arm,vsx,vxe}.hpp) ("compilers")
#   chromium: opens the HTML report and the release timeline headless ("browser")
#   graphviz: dot renders what `archdiff graph ... --format dot` writes ("compilers")
PACKAGES=(dwarves gdb universal-ctags protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
          g++-aarch64-linux-gnu g++-powerpc64le-linux-gnu g++-s390x-linux-gnu chromium
          graphviz)

missing=()
for package in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
        echo "tests/run.sh: the tests need these Debian packages, and this machine has no apt-get:" \
             "${missing[*]} (install the same tools with your package manager, then run python3 -m pytest)" >&2
        exit 2
    fi
    if [ "$(id -u)" = "0" ]; then
        as_root=()
    elif command -v sudo >/dev/null; then
        as_root=(sudo)
    else
        echo "tests/run.sh: the tests need these Debian packages: ${missing[*]};" \
             "run this script as root, install sudo, or have an administrator run:" \
             "apt-get install ${missing[*]}" >&2
        exit 2
    fi
    echo "tests/run.sh: installing ${missing[*]} with ${as_root[*]:-} apt-get" >&2
    # In the background while pip installs the test extra (the two share nothing; on a fresh
    # machine each takes half a minute or more); pytest starts only once both are done.
    (
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    ) &
    apt_job=$!
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    # No Debian package of this release has it (NVIDIA's CUDA toolkit does): said now, not after 10 minutes.
    echo "tests/run.sh: nvcc not found: the compilers tests that lay out CUDA headers will fail" \
         "(install NVIDIA's CUDA toolkit, or deselect them with -m 'not compilers')" >&2
fi

python3 -m pip install -q -e '.[test]'
if [ -n "${apt_job:-}" ] && ! wait "$apt_job"; then
    echo "tests/run.sh: apt-get could not install ${missing[*]}" >&2
    exit 2
fi
exec python3 -m pytest "$@"
