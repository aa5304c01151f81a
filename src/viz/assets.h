// The page's files (viz/web/, and dagre.min.js from Debian's python3-xstatic-dagre), compiled into the
// library by CMake (cmake/embed_assets.cmake writes assets.cpp), so a program serves its page with no
// files beside it.
#pragma once
#include <string_view>

namespace tg::viz {

struct Asset {
  std::string_view path;  // "/index.html", "/viz.js", ...
  std::string_view mime;  // "text/html; charset=utf-8", ...
  std::string_view data;
};

const Asset* find_asset(std::string_view path);  // nullptr when there is no such file

}  // namespace tg::viz
