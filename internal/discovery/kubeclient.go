package discovery

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// NewKubeClient is a client for Services and ConfigMaps only, from the
// kubeconfig file (empty: the in-cluster service account). It is a REST
// client over a scheme with core/v1 alone: client-go's full clientset
// registers every API group at init, which every driftd command would pay
// for (docs/discovery.md).
func NewKubeClient(kubeconfig, version string) (KubeClient, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return KubeClient{}, fmt.Errorf("kubernetes client: %w", err)
	}
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := corev1.AddToScheme(scheme); err != nil {
		return KubeClient{}, err
	}
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	cfg.UserAgent = "driftd/" + version
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return KubeClient{}, fmt.Errorf("kubernetes client: %w", err)
	}
	pc := runtime.NewParameterCodec(scheme)
	return KubeClient{
		Services:   func(ns string) ServiceAPI { return restServices{rc, pc, ns} },
		ConfigMaps: func(ns string) ConfigMapAPI { return restConfigMaps{rc, ns} },
	}, nil
}

type restServices struct {
	rc *rest.RESTClient
	pc runtime.ParameterCodec
	ns string
}

func (s restServices) List(ctx context.Context, opts metav1.ListOptions) (*corev1.ServiceList, error) {
	var l corev1.ServiceList
	err := s.rc.Get().Namespace(s.ns).Resource("services").VersionedParams(&opts, s.pc).Do(ctx).Into(&l)
	return &l, err
}

func (s restServices) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return s.rc.Get().Namespace(s.ns).Resource("services").VersionedParams(&opts, s.pc).Watch(ctx)
}

type restConfigMaps struct {
	rc *rest.RESTClient
	ns string
}

func (c restConfigMaps) Get(ctx context.Context, name string, _ metav1.GetOptions) (*corev1.ConfigMap, error) {
	var cm corev1.ConfigMap
	err := c.rc.Get().Namespace(c.ns).Resource("configmaps").Name(name).Do(ctx).Into(&cm)
	return &cm, err
}
