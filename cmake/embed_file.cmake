# SPDX-License-Identifier: Apache-2.0
# Script mode: turn IN (any file) into OUT, a C source defining
#   const char VAR[] = {...bytes..., 0};
# so data files ship inside the binary and work from any directory.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* Generated from ${NAME} at build time; do not edit. */\nconst char ${VAR}[] = {\n${bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
