# The Python package `chatpeg` (src/python): the extension chatpeg._chatpeg (pybind11) over
# chatpeg::chatpeg, plus the pure-Python part and its type stubs, laid out as a package in
# ${PROJECT_BINARY_DIR}/python (PYTHONPATH for the tests) and installed into the Python site
# directory under the install prefix (CHATPEG_PYTHON_INSTALL_DIR, relative to the prefix).
if(CHATPEG_PYTHON STREQUAL "OFF")
  return()
endif()
# Debian's pybind11 and pytest belong to the system interpreter; prefer it over one on PATH.
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module)
if(Python3_FOUND)
  find_package(pybind11 CONFIG QUIET)
endif()
if(NOT Python3_FOUND OR NOT pybind11_FOUND)
  if(CHATPEG_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "CHATPEG_PYTHON=ON needs pybind11-dev and python3-dev")
  endif()
  message(STATUS "chatpeg: Python package not built (pybind11 or Python headers not found)")
  return()
endif()
set(CHATPEG_PYTHON_BUILT ON)

set(chatpeg_py_dir ${PROJECT_BINARY_DIR}/python/chatpeg)
pybind11_add_module(chatpeg_python MODULE ${PROJECT_SOURCE_DIR}/src/python/binding.cpp)
set_target_properties(chatpeg_python PROPERTIES OUTPUT_NAME _chatpeg
  LIBRARY_OUTPUT_DIRECTORY ${chatpeg_py_dir})
target_link_libraries(chatpeg_python PRIVATE chatpeg::chatpeg)
target_include_directories(chatpeg_python PRIVATE ${PROJECT_SOURCE_DIR}/src)
chatpeg_warnings(chatpeg_python)

file(GLOB chatpeg_py_files CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/python/chatpeg/*.py ${PROJECT_SOURCE_DIR}/src/python/chatpeg/*.pyi
  ${PROJECT_SOURCE_DIR}/src/python/chatpeg/py.typed)
foreach(f ${chatpeg_py_files})
  get_filename_component(name ${f} NAME)
  configure_file(${f} ${chatpeg_py_dir}/${name} COPYONLY)
endforeach()

# The interpreter's own site directory when it lies under the install prefix (Debian:
# /usr/local/lib/python3.X/dist-packages), else lib/python3.X/site-packages under the prefix.
if(NOT CHATPEG_PYTHON_INSTALL_DIR)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_path('platlib'))"
    OUTPUT_VARIABLE chatpeg_py_site OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(FIND "${chatpeg_py_site}/" "${CMAKE_INSTALL_PREFIX}/" chatpeg_py_at)
  if(chatpeg_py_at EQUAL 0)
    file(RELATIVE_PATH chatpeg_py_rel "${CMAKE_INSTALL_PREFIX}" "${chatpeg_py_site}")
    set(CHATPEG_PYTHON_INSTALL_DIR ${chatpeg_py_rel})
  else()
    set(CHATPEG_PYTHON_INSTALL_DIR
      lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages)
  endif()
endif()
set(CHATPEG_PYTHON_INSTALL_DIR ${CHATPEG_PYTHON_INSTALL_DIR} CACHE STRING
  "Where the Python package goes, relative to the install prefix")
get_target_property(chatpeg_lib_kind chatpeg_lib TYPE)
if(chatpeg_lib_kind STREQUAL "SHARED_LIBRARY")
  file(RELATIVE_PATH chatpeg_py_to_lib "/p/${CHATPEG_PYTHON_INSTALL_DIR}/chatpeg"
    "/p/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(chatpeg_python PROPERTIES INSTALL_RPATH "$ORIGIN/${chatpeg_py_to_lib}")
endif()
install(TARGETS chatpeg_python LIBRARY DESTINATION ${CHATPEG_PYTHON_INSTALL_DIR}/chatpeg)
install(FILES ${chatpeg_py_files} DESTINATION ${CHATPEG_PYTHON_INSTALL_DIR}/chatpeg)
