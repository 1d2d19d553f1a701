# Browser tests (tests/web/): headless Chromium opens --report files from disk with the network
# off. Debian's chromium, chromium-driver and python3-selenium (make deps), run with the system
# Python; skipped with a notice where they or the charting JavaScript are missing.
if(NDT_HAVE_WEB_JS AND EXISTS /usr/bin/chromium AND EXISTS /usr/bin/chromedriver)
  add_test(NAME web_report
    COMMAND /usr/bin/python3 "${CMAKE_SOURCE_DIR}/tests/web/report_test.py"
            "$<TARGET_FILE:ndtwin>" "${CMAKE_BINARY_DIR}/web_test"
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  # `ndtwin serve`: API = CLI bytes, error paths, 8x200 load, a full queue's 503s, the forms of the
  # training, inference and planners areas in a browser.
  add_test(NAME web_serve
    COMMAND /usr/bin/python3 "${CMAKE_SOURCE_DIR}/tests/web/serve_test.py"
            "$<TARGET_FILE:ndtwin>" "${CMAKE_BINARY_DIR}/web_test"
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  # ~35 s (web_report) and ~70 s (web_serve) alone; 81 s and 107 s seen under ctest -j2 on 2 loaded
  # cores.
  set_tests_properties(web_report PROPERTIES TIMEOUT 180)
  set_tests_properties(web_serve PROPERTIES TIMEOUT 240)
else()
  message(STATUS "browser tests skipped: need web/node_modules, /usr/bin/chromium, /usr/bin/chromedriver")
endif()
