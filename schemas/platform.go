package schemas

import "time"

// PlatformVersion is the build information of GET /api/platform/version:
// static between deploys except the uptime, which restarts at every deploy.
type PlatformVersion struct {
	Service     string `json:"service" required:"true"`
	Status      string `json:"status" required:"true" enum:"ok"`
	Version     string `json:"version" required:"true" description:"the API version"`
	Release     string `json:"release" required:"true" description:"identifies the deploy; pins a client to it"`
	Runtime     string `json:"runtime" required:"true" description:"the Go runtime version"`
	Environment string `json:"environment" required:"true"`
	// Processor is the deposit processor mode: test (the embedded test
	// processor) or stripe.
	Processor     string    `json:"processor" required:"true" enum:"test,stripe"`
	StartedAt     time.Time `json:"startedAt" required:"true"`
	UptimeSeconds int64     `json:"uptimeSeconds" required:"true" minimum:"0"`
}

// PlatformModule is one module of the index: its name, path prefix and the
// URL path of its OpenAPI slice.
type PlatformModule struct {
	Name    string `json:"name" required:"true"`
	Prefix  string `json:"prefix" required:"true"`
	OpenAPI string `json:"openapi" required:"true" description:"URL path of the module's OpenAPI 3.0 slice"`
}

// PlatformIndexInfo is the title and version of the index.
type PlatformIndexInfo struct {
	Title   string `json:"title" required:"true"`
	Version string `json:"version" required:"true"`
}

// PlatformSDK names the published client packages.
type PlatformSDK struct {
	NPM []string `json:"npm" required:"true" nullable:"false" description:"npm packages of the TypeScript client generated from /api/openapi.json"`
}

// PlatformIndexPlatform is the platform part of the index.
type PlatformIndexPlatform struct {
	Version string      `json:"version" required:"true" description:"the API index version"`
	SDK     PlatformSDK `json:"sdk" required:"true"`
}

// PlatformIndex is GET /api/platform/openapi.json: the aggregate index of
// the modules this build serves, each with its OpenAPI slice, and the full
// document of the fintech modules. It is an index, not an OpenAPI document.
type PlatformIndex struct {
	OpenAPI  string                `json:"openapi" required:"true" description:"the OpenAPI version of the slices"`
	Info     PlatformIndexInfo     `json:"info" required:"true"`
	Platform PlatformIndexPlatform `json:"platform" required:"true"`
	Modules  []PlatformModule      `json:"modules" required:"true" nullable:"false"`
	Full     string                `json:"full" required:"true" description:"URL path of the full document of the fintech modules"`
	// Complete is the one document of every operation of every module (an
	// addition to the spec's index, whose full document it fixes to the
	// fintech modules).
	Complete string `json:"complete" required:"true" description:"URL path of the complete document: every operation of every module"`
}
