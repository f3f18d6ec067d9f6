package config

import (
	"slices"

	promconfig "github.com/prometheus/common/config"
	"gopkg.in/yaml.v3"
)

// The unmarshalers here use yaml's older func(any) error form on purpose:
// it decodes with the caller's decoder, so KnownFields(true) still holds
// inside (yaml.Node.Decode would start a lenient decoder).

// List is a sequence in the file. It decodes keeping every element, even
// one with errors: yaml.v3 drops an element whose unmarshaler fails, which
// would shift the index of every later one, and errors would name the
// wrong entry.
type List[T any] []T

// item is one element of a list, with the errors decoding it.
type item[T any] struct {
	v    T
	errs []string
}

// UnmarshalYAML keeps the element and holds its errors for the list.
func (it *item[T]) UnmarshalYAML(unmarshal func(any) error) error {
	err := unmarshal(&it.v)
	if te, ok := err.(*yaml.TypeError); ok {
		// A copy: te.Errors shares the decoder's backing array, which the
		// next element's errors overwrite.
		it.errs = slices.Clone(te.Errors)
		return nil
	}
	return err
}

// UnmarshalYAML decodes every element and reports all their errors.
func (l *List[T]) UnmarshalYAML(unmarshal func(any) error) error {
	var items []item[T]
	err := unmarshal(&items)
	var msgs []string
	if te, ok := err.(*yaml.TypeError); ok {
		msgs = slices.Clone(te.Errors)
	} else if err != nil {
		return err
	}
	*l = make(List[T], len(items))
	for i, it := range items {
		(*l)[i] = it.v
		msgs = append(msgs, it.errs...)
	}
	if len(msgs) > 0 {
		return &yaml.TypeError{Errors: msgs}
	}
	return nil
}

// ClassificationRules are the global host rules, in order.
type ClassificationRules []ClassificationRule

// UnmarshalYAML decodes the rules, keeping their indices in errors.
func (rs *ClassificationRules) UnmarshalYAML(unmarshal func(any) error) error {
	return (*List[ClassificationRule])(rs).UnmarshalYAML(unmarshal)
}

// HTTPClient is prometheus/common's HTTP client configuration as driftd
// decodes it: from driftd's defaults rather than prometheus' own, which
// follow redirects, so a block without follow_redirects means false.
type HTTPClient struct {
	promconfig.HTTPClientConfig `yaml:",inline"`
	// err is a plain error from a prometheus/common unmarshaler (TLS and
	// OAuth2 validate while decoding). Returned as is, it would stop
	// decoding without a line; the block holding it attaches its position
	// (withHTTPClientError) and clears it.
	err error
}

// DefaultHTTPClient is the HTTP client settings of a block without any.
func DefaultHTTPClient() HTTPClient { return HTTPClient{HTTPClientConfig: DefaultHTTPClientConfig()} }

// UnmarshalYAML implements the yaml.v3 obsolete unmarshaler interface.
func (h *HTTPClient) UnmarshalYAML(unmarshal func(any) error) error {
	type plain promconfig.HTTPClientConfig
	*h = DefaultHTTPClient()
	err := unmarshal((*plain)(&h.HTTPClientConfig))
	if _, ok := err.(*yaml.TypeError); err != nil && !ok {
		h.err = err
		return nil
	}
	return err
}

// withHTTPClientError adds the plain error an http_client block's
// prometheus/common unmarshaler returned, placed at the block, to err.
func withHTTPClientError(unmarshal func(any) error, h *HTTPClient, err error) error {
	if h.err == nil {
		return err
	}
	herr := httpClientError(unmarshal, h.err)
	h.err = nil
	switch e := err.(type) {
	case nil:
		return herr
	case *yaml.TypeError:
		e.Errors = append(e.Errors, herr.Errors...)
	}
	return err
}

// plainTarget is Target without its methods: what yaml.v3 decodes and
// encodes field by field.
type plainTarget Target

// UnmarshalYAML decodes a target strictly, with driftd's HTTP client
// defaults. Global values are not known here: Parse applies them
// afterwards.
func (t *Target) UnmarshalYAML(unmarshal func(any) error) error {
	*t = Target{HTTPClient: DefaultHTTPClient()}
	err := unmarshal((*plainTarget)(t))
	return withHTTPClientError(unmarshal, &t.HTTPClient, err)
}

// httpClientError places err at the target's http_client value.
func httpClientError(unmarshal func(any) error, err error) *yaml.TypeError {
	var values map[string]yaml.Node
	_ = unmarshal(&values) // positions only: the strict decode reported the rest
	n := values["http_client"]
	return nodeError(&n, "%v", err)
}

// MarshalYAML prints the target in the file's shape, its URL redacted.
func (t Target) MarshalYAML() (any, error) {
	t.URL = RedactedURL(t.URL)
	return plainTarget(t), nil
}
