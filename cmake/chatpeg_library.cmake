# libchatpeg: the api module (src/api, public headers under include/) over the library
# modules, static or shared per BUILD_SHARED_LIBS, and everything `cmake --install` puts down:
# headers, libraries, the chatpeg CLI, a CMake package (find_package(chatpeg CONFIG) →
# chatpeg::chatpeg) and chatpeg.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in
  ${PROJECT_BINARY_DIR}/include/chatpeg/version.h @ONLY)

file(GLOB chatpeg_api_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/api/*.cpp)
add_library(chatpeg_lib ${chatpeg_api_sources})
add_library(chatpeg::chatpeg ALIAS chatpeg_lib)
set_target_properties(chatpeg_lib PROPERTIES
  OUTPUT_NAME chatpeg EXPORT_NAME chatpeg
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
target_include_directories(chatpeg_lib
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
         $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(chatpeg_lib PUBLIC nlohmann_json::nlohmann_json
  PRIVATE chatpeg::response chatpeg::stream chatpeg::chat chatpeg::jinja chatpeg::json
          chatpeg::base)
chatpeg_warnings(chatpeg_lib)

# The library's modules, in link order (a module before the ones it uses).
set(chatpeg_library_modules chatpeg_response chatpeg_stream chatpeg_chat chatpeg_grammar
  chatpeg_jinja chatpeg_peg chatpeg_json chatpeg_base)

get_target_property(chatpeg_lib_type chatpeg_lib TYPE)
if(chatpeg_lib_type STREQUAL "SHARED_LIBRARY")
  set(CHATPEG_SHARED_LIB ON)  # chatpegConfig.cmake: a shared library needs no PCRE2 target
  # Exactly the API is exported: hidden visibility everywhere, CHATPEG_API on the API, and a
  # version script that keeps instantiated templates of other namespaces local.
  set(chatpeg_map ${PROJECT_SOURCE_DIR}/cmake/chatpeg.map)
  target_link_options(chatpeg_lib PRIVATE "LINKER:--version-script=${chatpeg_map}")
  if(CHATPEG_SANITIZE STREQUAL "" AND NOT CHATPEG_BUILD_FUZZ)
    target_link_options(chatpeg_lib PRIVATE "LINKER:--no-undefined")
  endif()
  set_property(TARGET chatpeg_lib APPEND PROPERTY LINK_DEPENDS ${chatpeg_map})
  set(chatpeg_installed_targets chatpeg_lib)
  set(CHATPEG_PC_LIBS "-lchatpeg")
else()
  set(CHATPEG_SHARED_LIB OFF)
  # A static libchatpeg needs the module archives it was built from.
  set(chatpeg_installed_targets chatpeg_lib ${chatpeg_library_modules})
  set(CHATPEG_PC_LIBS "-lchatpeg")
  foreach(m ${chatpeg_library_modules})
    string(APPEND CHATPEG_PC_LIBS " -l${m}")
  endforeach()
  # The response module's regexes (PCRE2, found by pkg-config in the top CMakeLists.txt; its
  # flags are a CMake list).
  list(JOIN PCRE2_LDFLAGS " " chatpeg_pcre2_flags)
  string(APPEND CHATPEG_PC_LIBS " ${chatpeg_pcre2_flags} -lstdc++ -lm")
endif()

install(TARGETS ${chatpeg_installed_targets} EXPORT chatpegTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/chatpeg.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/chatpeg DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/chatpeg/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/chatpeg)

set(chatpeg_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/chatpeg)
install(EXPORT chatpegTargets NAMESPACE chatpeg:: DESTINATION ${chatpeg_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/chatpegConfig.cmake.in
  ${PROJECT_BINARY_DIR}/chatpegConfig.cmake INSTALL_DESTINATION ${chatpeg_cmake_dir})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/chatpegConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/chatpegConfig.cmake
  ${PROJECT_BINARY_DIR}/chatpegConfigVersion.cmake DESTINATION ${chatpeg_cmake_dir})

# Relocatable: the prefix is found from where the .pc file lies.
file(RELATIVE_PATH CHATPEG_PC_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(${PROJECT_SOURCE_DIR}/cmake/chatpeg.pc.in ${PROJECT_BINARY_DIR}/chatpeg.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/chatpeg.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
