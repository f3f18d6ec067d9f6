package web

import _ "embed"

// appJS is the pages' one script (static/app.js).
//
//go:embed static/app.js
var appJS []byte
