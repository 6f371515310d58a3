package awssdk

import "stepwise/integration/awssdk/awsmodel"

// The models calls are driven by are package awsmodel's; the integration
// speaks of their parts by these names.
type (
	Model        = awsmodel.Model
	Metadata     = awsmodel.Metadata
	Operation    = awsmodel.Operation
	Shape        = awsmodel.Shape
	Ref          = awsmodel.Ref
	Member       = awsmodel.Member
	Members      = awsmodel.Members
	Models       = awsmodel.Models
	XMLNamespace = awsmodel.XMLNamespace
)

// ErrUnknownService is returned for a service no model describes.
var ErrUnknownService = awsmodel.ErrUnknownService

// ServiceNames lists the service names of the resources there are models
// for calls: the embedded whole models and those in dir.
func ServiceNames(dir string) []string { return awsmodel.ServiceNames(dir) }

// pascal is a model name as Step Functions spells it.
func pascal(name string) string { return awsmodel.Pascal(name) }
