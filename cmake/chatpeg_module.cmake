# chatpeg_add_module(<name> [DEPS <module>...] [PUBLIC_LIBS <target>...])
# Declares the static library target chatpeg_<name> (alias chatpeg::<name>) from the .cpp files
# under src/<name>/ (subfolders included), its interface headers under src/include/chatpeg/<name>/
# (not installed).
# Only the modules named in DEPS are linked; tools/check_deps.py enforces the same rule on
# #include lines, so a module cannot reach a module it did not declare.
# Designated initializers leave option fields at their defaults on purpose.
set(CHATPEG_WARNINGS -Wall -Wextra -Wpedantic -Wnon-virtual-dtor -Wno-missing-field-initializers)
# GCC 12 reports false positives inside libstdc++'s inlined std::string copies at -O2/-O3
# (GCC bugs 105329 and 105651: -Wrestrict on operator+, -Wmaybe-uninitialized on assign).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND CHATPEG_WARNINGS -Wno-restrict -Wno-maybe-uninitialized)
endif()

function(chatpeg_warnings target)
  target_compile_options(${target} PRIVATE ${CHATPEG_WARNINGS})
endfunction()

function(chatpeg_add_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;PUBLIC_LIBS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  if(NOT sources)  # a module whose sources are not written yet still configures
    set(placeholder ${CMAKE_CURRENT_BINARY_DIR}/chatpeg_${name}_empty.cpp)
    file(WRITE ${placeholder} "// module ${name} has no sources yet\n")
    set(sources ${placeholder})
  endif()
  add_library(chatpeg_${name} STATIC ${sources})
  add_library(chatpeg::${name} ALIAS chatpeg_${name})
  target_include_directories(chatpeg_${name}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src/include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  foreach(dep ${ARG_DEPS})
    target_link_libraries(chatpeg_${name} PUBLIC chatpeg::${dep})
  endforeach()
  if(ARG_PUBLIC_LIBS)
    target_link_libraries(chatpeg_${name} PUBLIC ${ARG_PUBLIC_LIBS})
  endif()
  chatpeg_warnings(chatpeg_${name})
endfunction()
