# chatpeg_add_module(<name> [DEPS <module>...] [PUBLIC_LIBS <target>...])
# Declares the library target chatpeg_<name> (alias chatpeg::<name>) from src/<name>/*.cpp.
# Only the modules named in DEPS are linked; tools/check_deps.py enforces the same rule on
# #include lines, so a module cannot reach a module it did not declare.
set(CHATPEG_WARNINGS -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor)

function(chatpeg_warnings target)
  target_compile_options(${target} PRIVATE ${CHATPEG_WARNINGS})
endfunction()

function(chatpeg_add_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;PUBLIC_LIBS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  add_library(chatpeg_${name} STATIC ${sources})
  add_library(chatpeg::${name} ALIAS chatpeg_${name})
  target_include_directories(chatpeg_${name}
    PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  foreach(dep ${ARG_DEPS})
    target_link_libraries(chatpeg_${name} PUBLIC chatpeg::${dep})
  endforeach()
  if(ARG_PUBLIC_LIBS)
    target_link_libraries(chatpeg_${name} PUBLIC ${ARG_PUBLIC_LIBS})
  endif()
  chatpeg_warnings(chatpeg_${name})
endfunction()
