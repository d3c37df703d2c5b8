// Package aiclient talks to an OpenAI-compatible chat-completions endpoint
// for the constitution advisor: one bounded call, one JSON object back. It
// knows nothing of sliders or prompts; the advisor (gateway/constitution)
// writes the prompt, validates the answer and falls back when this fails.
package aiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Config configures the endpoint.
type Config struct {
	// BaseURL is the API base, e.g. https://api.openai.com/v1 (the client
	// posts to BaseURL + "/chat/completions").
	BaseURL string
	APIKey  string
	Model   string
	// Timeout bounds one call, connection and answer included.
	Timeout time.Duration
}

// DefaultTimeout bounds a call when Config.Timeout is not set.
const DefaultTimeout = 20 * time.Second

// maxTokens bounds the model's answer.
const maxTokens = 800

// Errors a call ends with, besides the endpoint's own.
var (
	// ErrTimeout: the endpoint did not answer within the timeout.
	ErrTimeout = errors.New("ai endpoint: no answer within the timeout")
	// ErrNoAnswer: the endpoint answered without a choice.
	ErrNoAnswer = errors.New("ai endpoint: answer without a choice")
)

// Client calls the endpoint.
type Client struct {
	client  *openai.Client
	model   string
	timeout time.Duration
}

// New builds a client; BaseURL and Model are required.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("AI_API_URL and AI_MODEL are both required for the AI endpoint")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &http.Client{Timeout: cfg.Timeout}
	return &Client{client: openai.NewClientWithConfig(oc), model: cfg.Model, timeout: cfg.Timeout}, nil
}

// Timeout is the bound of one call.
func (c *Client) Timeout() time.Duration { return c.timeout }

// CompleteJSON sends the system and user messages, asking for a JSON object,
// and returns the first choice's content unchecked. A call past the timeout
// ends with ErrTimeout.
func (c *Client) CompleteJSON(ctx context.Context, system, user string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: c.model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject},
		MaxTokens:      maxTokens,
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return "", fmt.Errorf("%w: %w", ErrTimeout, err)
		}
		return "", fmt.Errorf("ai endpoint: %w", err)
	}
	if len(resp.Choices) == 0 {
		return "", ErrNoAnswer
	}
	return resp.Choices[0].Message.Content, nil
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
