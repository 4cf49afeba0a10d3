package httpapi

// Unexported names the external tests and fuzz targets use directly.
var (
	ReadPutBody = readPutBody
	IntParam    = intParam
	StatusOf    = statusOf
)

// PutBody is what ReadPutBody returns.
type PutBody = putBody
