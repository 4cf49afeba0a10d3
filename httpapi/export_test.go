package httpapi

// Unexported functions the external tests and fuzz targets call directly.
var (
	ReadSetBody = readSetBody
	IntParam    = intParam
	StatusOf    = statusOf
)
