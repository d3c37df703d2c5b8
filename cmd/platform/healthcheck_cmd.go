package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"
)

// runHealthcheck GETs a URL of this host and exits 0 on a 200: the health
// check of a container whose image has no curl (docker-compose.yml). Only
// loopback URLs: it is not a general HTTP client.
func runHealthcheck(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: platform healthcheck http://127.0.0.1:PORT/PATH")
		return 2
	}
	u, err := url.Parse(args[0])
	if err != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "::1" && u.Hostname() != "localhost") {
		fmt.Fprintln(os.Stderr, "platform healthcheck: want an http URL on 127.0.0.1, ::1 or localhost")
		return 2
	}
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(u.String())
	if err != nil {
		fmt.Fprintln(os.Stderr, "platform healthcheck: "+err.Error())
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "platform healthcheck: %s answered %d\n", u, resp.StatusCode)
		return 1
	}
	return 0
}
