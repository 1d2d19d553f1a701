# The charting JavaScript inlined into reports (report/assets.h): compiled into ndt_report from
# web/node_modules, which `make deps` installs with `npm ci` from web/package-lock.json. Without
# it the build still works and reports say the charts are missing (with a warning here).
set(NDT_WEB_MODULES "${CMAKE_SOURCE_DIR}/web/node_modules")
set(NDT_WEB_JS "${NDT_WEB_MODULES}/vega/build/vega.min.js"
               "${NDT_WEB_MODULES}/vega-lite/build/vega-lite.min.js"
               "${NDT_WEB_MODULES}/vega-embed/build/vega-embed.min.js")
set(NDT_HAVE_WEB_JS TRUE)
foreach(f ${NDT_WEB_JS})
  if(NOT EXISTS "${f}")
    set(NDT_HAVE_WEB_JS FALSE)
  endif()
endforeach()
set(NDT_ASSETS_CC "${CMAKE_BINARY_DIR}/generated/report_assets.cc")
if(NDT_HAVE_WEB_JS)
  add_custom_command(OUTPUT "${NDT_ASSETS_CC}"
    COMMAND "${CMAKE_COMMAND}" -DIN=${NDT_WEB_MODULES} -DOUT=${NDT_ASSETS_CC}
            -P "${CMAKE_SOURCE_DIR}/scripts/embed_js.cmake"
    DEPENDS ${NDT_WEB_JS} "${CMAKE_SOURCE_DIR}/scripts/embed_js.cmake"
    COMMENT "Embedding Vega/Vega-Lite/Vega-Embed into report_assets.cc")
else()
  message(WARNING "web/node_modules is missing (run `make deps`): reports will have no charts")
  configure_file("${CMAKE_SOURCE_DIR}/scripts/no_js_assets.cc.in" "${NDT_ASSETS_CC}" COPYONLY)
endif()
target_sources(ndt_report PRIVATE "${NDT_ASSETS_CC}")
