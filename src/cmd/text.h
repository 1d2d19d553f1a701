// File: cmd/text.h
// TextOut moved to report/text.h (rendering lives in report/); this forward goes once every
// command includes that.
#ifndef NDTWIN_CMD_TEXT_H_
#define NDTWIN_CMD_TEXT_H_

#include "report/text.h"

#endif  // NDTWIN_CMD_TEXT_H_
