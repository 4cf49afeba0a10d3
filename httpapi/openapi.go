package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDoc describes every route; TestOpenAPIMatchesRoutes keeps it true.
//
//go:embed openapi.json
var openAPIDoc []byte

func openAPI(c echo.Context) error {
	return c.JSONBlob(http.StatusOK, openAPIDoc)
}
