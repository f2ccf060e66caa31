# SPDX-License-Identifier: Apache-2.0
# ac_embed(TARGET VAR FILE): compile FILE into TARGET as `const char VAR[]`
# (NUL-terminated), regenerated whenever FILE changes.
function(ac_embed target var file)
  get_filename_component(abs "${file}" ABSOLUTE)
  file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${abs}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embed_${var}.c")
  add_custom_command(OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DIN=${abs} -DOUT=${out} -DVAR=${var} -DNAME=${rel}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS "${abs}" ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
