// The chatpeg C++ API in one include: chat templates loaded once, then prepare / parse /
// stream per request (chatpeg/api/template.h), Hugging Face response templates
// (chatpeg/api/response_template.h), errors (chatpeg/api/error.h) and the version
// (chatpeg/version.h). Link with chatpeg::chatpeg (CMake) or `pkg-config --libs chatpeg`.
// The C API is <chatpeg.h>.
#pragma once

#include "chatpeg/api/error.h"
#include "chatpeg/api/response_template.h"
#include "chatpeg/api/template.h"
#include "chatpeg/version.h"
