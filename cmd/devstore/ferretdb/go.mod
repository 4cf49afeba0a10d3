module github.com/FerretDB/FerretDB

go 1.24

toolchain go1.24.3

require (
	github.com/AlekSi/pointer v1.2.0
	github.com/FerretDB/wire v0.0.8
	github.com/google/uuid v1.6.0
	github.com/pmezard/go-difflib v1.0.0
	github.com/xdg-go/scram v1.1.2
	github.com/xdg-go/stringprep v1.0.4
	golang.org/x/crypto v0.38.0
	golang.org/x/sys v0.33.0
	modernc.org/sqlite v1.32.0
)

require (
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/ncruces/go-strftime v0.1.9 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/xdg-go/pbkdf2 v1.0.0 // indirect
	golang.org/x/text v0.25.0 // indirect
	modernc.org/gc/v3 v3.0.0-20240107210532-573471604cb6 // indirect
	modernc.org/libc v1.55.3 // indirect
	modernc.org/mathutil v1.6.0 // indirect
	modernc.org/memory v1.8.0 // indirect
	modernc.org/strutil v1.2.0 // indirect
	modernc.org/token v1.1.0 // indirect
)
