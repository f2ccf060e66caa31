# SPDX-License-Identifier: Apache-2.0
# Turns the catalogue JSON files into one C file, so the library carries its
# own copy of the catalogue.  Run with cmake -P:
#   -DSRC_DIR=<dir of the JSON files> -DNAMES=<a.json|b.json|...> -DOUT=<file.c>
# The bytes are written as unsigned char arrays (string literals have a
# portable length limit of 4095 characters), each followed by a NUL.
string(REPLACE "|" ";" names "${NAMES}")
set(body "")
set(table "")
set(i 0)
# twelve bytes per line
string(REPEAT "0x[0-9a-f][0-9a-f]," 12 row)
foreach(name IN LISTS names)
  file(READ "${SRC_DIR}/${name}" hex HEX)
  string(LENGTH "${hex}" hexlen)
  math(EXPR len "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(${row})" "\\1\n\t" bytes "${bytes}")
  string(APPEND body "static const unsigned char text_${i}[] = {\n\t${bytes}0x00\n};\n\n")
  string(APPEND table "\t{ \"${name}\", (const char *)text_${i}, ${len} },\n")
  math(EXPR i "${i} + 1")
endforeach()
set(content "/* Generated from the JSON files of models/catalog/ by models/embed_catalog.cmake;\n * do not edit.  The catalogue copy built into the library. */\n#include \"models/catalog.h\"\n\n${body}static const struct catalog_file files[] = {\n${table}};\n\nconst struct catalog_file *catalog_embedded(size_t *n)\n{\n\t*n = sizeof(files) / sizeof(files[0]);\n\treturn files;\n}\n")
# Rewrite only on change, so dependents rebuild only when the catalogue does.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${content}")
