# seqd: a static binary on a distroless base, running as non-root.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/seqd ./cmd/seqd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/seqd /seqd
USER nonroot:nonroot
EXPOSE 8080
ENV SEQD_ADDR=0.0.0.0:8080
ENTRYPOINT ["/seqd"]
