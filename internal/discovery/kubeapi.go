package discovery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/driftd/driftd/internal/mcp"
)

// KubeClient reads Services (list and watch) and ConfigMaps (get) through
// client-go: its REST client over a scheme holding core/v1 alone, so that
// driftd links neither the full clientset nor the typed clients, whose
// scheme registers every API group when the process starts. Everything
// else is client-go's: kubeconfig loading, the in-cluster account, TLS,
// tokens and token files, client certificates, exec credential plugins.
type KubeClient struct {
	rest   rest.Interface
	params runtime.ParameterCodec
}

// API request rates: client-go's defaults (5/s, bursts of 10) would make
// a refresh that reads a thousand manifests from ConfigMaps last minutes.
const (
	kubeQPS   = 50
	kubeBurst = 100
)

// NewKubeClient is a client from the kubeconfig file's current context
// (empty: the in-cluster service account), as client-go loads them.
func NewKubeClient(kubeconfig, version string) (*KubeClient, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) {
			err = errors.New("not in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset) and no kubeconfig given")
		}
	} else {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return newKubeClient(cfg, version)
}

// newKubeClient is a core/v1 REST client of cfg.
func newKubeClient(cfg *rest.Config, version string) (*KubeClient, error) {
	scheme := runtime.NewScheme()
	// core/v1's types, and the meta ones (ListOptions as query parameters,
	// Status, WatchEvent) in its group.
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	cfg.UserAgent = "driftd/" + version
	cfg.QPS, cfg.Burst = kubeQPS, kubeBurst
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &KubeClient{rest: rc, params: runtime.NewParameterCodec(scheme)}, nil
}

// listServices lists the Services of ns ("": every namespace).
func (c *KubeClient) listServices(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.ServiceList, error) {
	l := &corev1.ServiceList{}
	err := c.rest.Get().Namespace(ns).Resource("services").VersionedParams(&opts, c.params).Do(ctx).Into(l)
	return l, err
}

// watchServices watches the Services of ns ("": every namespace).
func (c *KubeClient) watchServices(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rest.Get().Namespace(ns).Resource("services").VersionedParams(&opts, c.params).Watch(ctx)
}

// configMapData is the data of ConfigMap name in ns.
func (c *KubeClient) configMapData(ctx context.Context, ns, name string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	if err := c.rest.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm); err != nil {
		return nil, kubeError(err)
	}
	return cm.Data, nil
}

// StatusError is an API request the server refused: its code and reason
// (Forbidden, Expired, …), not its message, which is the server's prose.
type StatusError struct {
	Code   int32
	Reason metav1.StatusReason
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("status %d", e.Code)
	if e.Reason != "" {
		s += " " + string(e.Reason)
	}
	return s
}

// kubeError classifies an error of client-go: a status the server
// answered is auth_required (401, 403) or http_status; anything else is
// classified as the HTTP clients' errors are (connect, tls, timeout, …).
func kubeError(err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		reason := mcp.ReasonHTTPStatus
		if s.Code == http.StatusUnauthorized || s.Code == http.StatusForbidden {
			reason = mcp.ReasonAuthRequired
		}
		return &Error{Reason: reason, Err: &StatusError{Code: s.Code, Reason: s.Reason}}
	}
	// A TLS alert from the server (no or a refused client certificate)
	// is a net.OpError of crypto/tls's, its alert type unexported.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return &Error{Reason: mcp.ReasonTLS, Err: err}
	}
	return &Error{Reason: Reason(err), Err: err}
}
