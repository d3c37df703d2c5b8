package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/gateway/server/servertest"
)

// greetRequest is the request of the example operation: a path parameter
// and a JSON body, each bounded by its tags.
type greetRequest struct {
	Name     string `path:"name" json:"-" maxLength:"20"`
	Greeting string `json:"greeting" required:"true" minLength:"1" maxLength:"40"`
}

type greeting struct {
	Text string `json:"text"`
}

// An operation is declared once, with its request type, its answers and
// its rate-limit class: the request is bound and checked against the
// type's tags before Handle runs, and the OpenAPI document is reflected
// from the same declaration.
func ExampleOp() {
	s := servertest.New()
	g := s.Root().Group("/api/example")
	server.Post(g, "/greet/:name", server.Op[greetRequest]{
		Summary:     "Greet someone",
		Description: "Answers the greeting addressed to name. Anyone may call it.",
		Public:      true,
		Class:       ratelimit.Write,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the greeting", greeting{})},
		Handle: func(c *fiber.Ctx, req *greetRequest) error {
			return c.JSON(greeting{Text: req.Greeting + ", " + req.Name})
		},
	})
	s.Finish()

	for _, body := range []string{`{"greeting":"Hello"}`, `{}`} {
		req := httptest.NewRequest(http.MethodPost, "/api/example/greet/Ada", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.App.Test(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		answer, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(answer))
	}
	for _, r := range s.Routes() {
		if r.Decl != nil {
			fmt.Println(r.Method, r.Path, r.Summary)
		}
	}
	// Output:
	// 200 {"text":"Hello, Ada"}
	// 422 {"error":"validation_failed","fields":{"greeting":"is required"},"message":"some fields are missing or invalid"}
	// POST /api/example/greet/:name Greet someone
}
