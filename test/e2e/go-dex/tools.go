//go:build tools

// Package tools pins the dex command this module builds (`go build github.com/dexidp/dex/cmd/dex`).
package tools

import _ "github.com/dexidp/dex/cmd/dex"
