"""moto_server with the two gaps the real Karpenter controller falls into filled (test tooling).

Run with the moto venv's python, arguments as moto_server's (`-H 127.0.0.1 -p PORT`). Patches moto's
backends in this process, then serves exactly as `moto_server` does. Measured against moto 5.2.1:

1. SSM has none of the EKS-optimized AMI parameters that Karpenter reads to resolve
   `al2023@latest` (or `al2023@vYYYYMMDD`), and refuses PutParameter under /aws: every EC2NodeClass
   stays `AMIsReady=False`. Here `/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/
   standard/<recommended|amazon-eks-node-al2023-...>/image_id` resolve, for x86_64 and arm64, to the
   AMI of moto's own `/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-<arch>`
   parameter, an image that exists in moto's EC2 catalogue. The nvidia/neuron variants stay absent
   (moto has no such images; Karpenter skips a variant it cannot resolve).
2. CreateFleet builds each launch specification from the launch template's top-level `GroupSet`
   only, while Karpenter's templates put their security groups on `NetworkInterfaces[].Groups`
   (and the instance profile in `IamInstanceProfile`, which moto's on-demand path drops): every
   instance came up without the class's groups, so every NodeClaim went
   `Drifted=True (SecurityGroupDrift)` ~2 s after initialisation and was replaced. Here the fleet's
   specifications carry the template's interface groups, and each launched instance is associated
   with the template's instance profile, as EC2 does.
3. IAM has no ListInstanceProfileTags (NotImplementedError → HTTP 500), though it keeps the tags
   CreateInstanceProfile / TagInstanceProfile set: with real Karpenter's profiles present, karpctl
   teardown's sweep of Karpenter's leftovers reads them. Here it answers the stored tags.
4. EKS drops CreateCluster's `accessConfig`: DescribeCluster never reports `authenticationMode`, which
   AWS reports for every cluster (CONFIG_MAP for those older than access entries), so a cluster whose
   nodes join by access entry read as a ConfigMap-only one. Here the mode given at creation is kept
   and reported.
5. KMS EnableKey, DisableKey, CancelKeyDeletion and ScheduleKeyDeletion look the key up by its id
   only: given the key ARN, which AWS accepts ("KeyId: key ID or key ARN", KMS API reference) and
   doctor's printed `aws kms enable-key --key-id <arn>` uses, moto raises KeyError (HTTP 500). Here
   the ARN is read as its key id, as moto's other KMS calls already do (KmsBackend.get_key_id).
6. EKS has no Pod Identity API and no add-on API (moto 5.2.1, and 5.2.6, the newest on PyPI on
   2026-12-05): ListPodIdentityAssociations and ListAddons answer 404, so a Pod Identity install
   cannot be judged. Here, on the cluster's record and shaped as botocore's eks model has them:
   Create/List (namespace and serviceAccount filters, nextToken)/Describe/Update/Delete
   PodIdentityAssociation, TagResource/UntagResource/ListTagsForResource on an association's ARN,
   and Create/List/Describe/DeleteAddon (ACTIVE at once; nothing runs an add-on's pods). Like AWS,
   one association per namespace and service account (ResourceInUseException), a role ARN that is
   not one is InvalidParameterException, an unknown cluster, id or add-on ResourceNotFoundException.
"""

import re
import sys

from moto.core.responses import ActionResult
from moto.eks import models as eks_models
from moto.eks import responses as eks_responses
from moto.eks import urls as eks_urls
from moto.eks.exceptions import ResourceInUseException, ResourceNotFoundException
from moto.eks.utils import validate_role_arn
from moto.core.utils import utcnow
from moto.moto_api._internal import mock_random
from moto.ec2.models import fleets as moto_fleets
from moto.iam import responses as iam_responses
from moto.kms import models as kms_models
from moto.ssm import models as ssm_models

_EKS_AL2023 = re.compile(
    r"^/aws/service/eks/optimized-ami/[0-9.]+/amazon-linux-2023/(x86_64|arm64)/standard/"
    r"(recommended|amazon-eks-node-al2023-(?:x86_64|arm64)-standard-[0-9.]+-v[0-9]+)/image_id$"
)
_LATEST_AL2023 = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-{}"

_check_loading_status = ssm_models.ParameterDict._check_loading_status


def _check_loading_status_with_eks(self, key):
    _check_loading_status(self, key)
    m = _EKS_AL2023.match(str(key or ""))
    if not m or dict.__contains__(self, key):
        return
    source = _LATEST_AL2023.format(m.group(1))
    _check_loading_status(self, source)
    versions = dict.get(self, source) or []
    if not versions:
        return  # a region without moto AMI data: the parameter stays absent, as before
    latest = versions[-1]
    self.setdefault(key, []).append(
        ssm_models.Parameter(
            account_id=self.account_id,
            name=key,
            value=latest.value,
            parameter_type="String",
            description=None,
            allowed_pattern=None,
            keyid=None,
            last_modified_date=latest.last_modified_date,
            version=1,
            data_type="aws:ec2:image",
        )
    )


ssm_models.ParameterDict._check_loading_status = _check_loading_status_with_eks


def _interface_groups(template_data):
    groups = []
    for nic in template_data.get("NetworkInterfaces") or template_data.get("NetworkInterface") or []:
        for key in ("Groups", "SecurityGroupIds", "SecurityGroupId", "Group"):
            value = nic.get(key)
            if isinstance(value, str):
                value = [value]
            groups.extend(value or [])
    return groups


_fleet_init = moto_fleets.Fleet.__init__
_spec_init = moto_fleets.SpotFleetLaunchSpec.__init__


def _fleet_init_keeping_template(self, ec2_backend, *args, **kwargs):
    # Fleet.__init__ resolves each template version and launches at once: give the launch specs
    # made inside it the template's interface groups, then associate the template's profile.
    template_groups = {}

    def spec_init(spec, *a, **kw):
        _spec_init(spec, *a, **kw)
        lt = spec.launch_template_spec or {}
        key = (lt.get("LaunchTemplateId"), str(lt.get("Version")))
        if key not in template_groups:
            template = ec2_backend.get_launch_template(template_id=lt.get("LaunchTemplateId"))
            template_groups[key] = _interface_groups(template.get_version(lt.get("Version")).data)
        if not spec.group_set:
            spec.group_set = list(template_groups[key])

    moto_fleets.SpotFleetLaunchSpec.__init__ = spec_init
    try:
        _fleet_init(self, ec2_backend, *args, **kwargs)
    finally:
        moto_fleets.SpotFleetLaunchSpec.__init__ = _spec_init
    launched = [(i["instance"], i.get("launch_spec")) for i in self.on_demand_instances]
    launched += [(r.instance, r.launch_spec) for r in self.spot_requests if getattr(r, "instance", None)]
    for instance, spec in launched:
        profile = getattr(spec, "_iam_instance_profile_arn", None) or {}
        if not profile or instance.id in ec2_backend.iam_instance_profile_associations:
            continue
        ec2_backend.associate_iam_instance_profile(
            instance_id=instance.id,
            iam_instance_profile_name=profile.get("Name"),
            iam_instance_profile_arn=profile.get("Arn"),
        )


moto_fleets.Fleet.__init__ = _fleet_init_keeping_template


def _list_instance_profile_tags(self):
    profile = self.backend.get_instance_profile(self._get_param("InstanceProfileName"))
    return ActionResult({"Tags": list(profile.tags), "IsTruncated": False})


iam_responses.IamResponse.list_instance_profile_tags = _list_instance_profile_tags

_create_cluster = eks_responses.EKSResponse.create_cluster


def _create_cluster_keeping_access_config(self):
    result = _create_cluster(self)
    access = self._get_param("accessConfig") or {}
    cluster = self.eks_backend.describe_cluster(name=self._get_param("name"))
    cluster.access_config = {"authenticationMode": access.get("authenticationMode", "CONFIG_MAP")}
    return result


eks_responses.EKSResponse.create_cluster = _create_cluster_keeping_access_config



def _by_key_arn(name):
    original = getattr(kms_models.KmsBackend, name)

    def call(self, key_id, *args, **kwargs):
        return original(self, self.get_key_id(key_id), *args, **kwargs)

    return call


for _name in ("enable_key", "disable_key", "cancel_key_deletion", "schedule_key_deletion"):
    setattr(kms_models.KmsBackend, _name, _by_key_arn(_name))

# --- 6. EKS Pod Identity associations and add-ons --------------------------------------------------

def _not_found(message):
    return ResourceNotFoundException(
        clusterName=None, nodegroupName=None, fargateProfileName=None, addonName=None, message=message
    )


def _cluster(backend, name):
    cluster = backend.clusters.get(name)
    if cluster is None:
        raise _not_found(eks_models.CLUSTER_NOT_FOUND_MSG.format(clusterName=name))
    if not hasattr(cluster, "pod_identity_associations"):
        cluster.pod_identity_associations = {}
        cluster.addons = {}
    return cluster


def _association(backend, cluster_name, association_id):
    found = _cluster(backend, cluster_name).pod_identity_associations.get(association_id)
    if found is None:
        raise _not_found(f"No Pod Identity Association found for ID: {association_id}")
    return found


_SUMMARY = ("clusterName", "namespace", "serviceAccount", "associationArn", "associationId")


def _create_pod_identity_association(self):
    backend = self.eks_backend
    cluster = _cluster(backend, self._get_param("name"))
    namespace, account = self._get_param("namespace"), self._get_param("serviceAccount")
    role_arn = self._get_param("roleArn")
    validate_role_arn(role_arn)
    for a in cluster.pod_identity_associations.values():
        if a["namespace"] == namespace and a["serviceAccount"] == account:
            raise ResourceInUseException(
                clusterName=cluster.name, nodegroupName=None, addonName=None,
                message=f"Association already exists: {a['associationArn']}",
            )
    association_id = "a-" + mock_random.get_random_string(length=17, lower_case=True)
    now = utcnow()
    association = {
        "clusterName": cluster.name,
        "namespace": namespace,
        "serviceAccount": account,
        "roleArn": role_arn,
        "associationArn": cluster.arn.replace(":cluster/", ":podidentityassociation/") + "/" + association_id,
        "associationId": association_id,
        "tags": dict(self._get_param("tags") or {}),
        "createdAt": now,
        "modifiedAt": now,
        "disableSessionTags": bool(self._get_param("disableSessionTags")),
    }
    cluster.pod_identity_associations[association_id] = association
    return ActionResult({"association": association})


def _list_pod_identity_associations(self):
    cluster = _cluster(self.eks_backend, self._get_param("name"))
    namespace, account = self._get_param("namespace"), self._get_param("serviceAccount")
    matching = [
        {k: a[k] for k in _SUMMARY}
        for a in cluster.pod_identity_associations.values()
        if (namespace is None or a["namespace"] == namespace)
        and (account is None or a["serviceAccount"] == account)
    ]
    start = int(self._get_param("nextToken") or 0)
    size = int(self._get_param("maxResults") or 100)
    page = matching[start : start + size]
    more = start + size < len(matching)
    return ActionResult({"associations": page, **({"nextToken": str(start + size)} if more else {})})


def _describe_pod_identity_association(self):
    a = _association(self.eks_backend, self._get_param("name"), self._get_param("associationId"))
    return ActionResult({"association": a})


def _update_pod_identity_association(self):
    a = _association(self.eks_backend, self._get_param("name"), self._get_param("associationId"))
    role_arn = self._get_param("roleArn")
    if role_arn is not None:
        validate_role_arn(role_arn)
        a["roleArn"] = role_arn
    if self._get_param("disableSessionTags") is not None:
        a["disableSessionTags"] = bool(self._get_param("disableSessionTags"))
    a["modifiedAt"] = utcnow()
    return ActionResult({"association": a})


def _delete_pod_identity_association(self):
    cluster = _cluster(self.eks_backend, self._get_param("name"))
    a = _association(self.eks_backend, cluster.name, self._get_param("associationId"))
    del cluster.pod_identity_associations[a["associationId"]]
    return ActionResult({"association": a})


def _create_addon(self):
    cluster = _cluster(self.eks_backend, self._get_param("name"))
    name = self._get_param("addonName")
    if name in cluster.addons:
        raise ResourceInUseException(
            clusterName=cluster.name, nodegroupName=None, addonName=name,
            message=f"Addon already exists with name: {name}",
        )
    now = utcnow()
    cluster.addons[name] = {
        "addonName": name,
        "clusterName": cluster.name,
        "status": "ACTIVE",
        "addonVersion": self._get_param("addonVersion") or "v1.3.0-eksbuild.1",
        "health": {"issues": []},
        "addonArn": cluster.arn.replace(":cluster/", ":addon/") + f"/{name}/" + mock_random.get_random_hex(8),
        "createdAt": now,
        "modifiedAt": now,
        "tags": dict(self._get_param("tags") or {}),
    }
    return ActionResult({"addon": cluster.addons[name]})


def _addon(self):
    cluster = _cluster(self.eks_backend, self._get_param("name"))
    name = self._get_param("addonName")
    if name not in cluster.addons:
        raise _not_found(f"No addon: {name} found in cluster: {cluster.name}")
    return cluster, name


def _describe_addon(self):
    cluster, name = _addon(self)
    return ActionResult({"addon": cluster.addons[name]})


def _delete_addon(self):
    cluster, name = _addon(self)
    return ActionResult({"addon": cluster.addons.pop(name)})


def _list_addons(self):
    cluster = _cluster(self.eks_backend, self._get_param("name"))
    return ActionResult({"addons": sorted(cluster.addons)})


for _name, _fn in {
    "create_pod_identity_association": _create_pod_identity_association,
    "list_pod_identity_associations": _list_pod_identity_associations,
    "describe_pod_identity_association": _describe_pod_identity_association,
    "update_pod_identity_association": _update_pod_identity_association,
    "delete_pod_identity_association": _delete_pod_identity_association,
    "create_addon": _create_addon,
    "describe_addon": _describe_addon,
    "delete_addon": _delete_addon,
    "list_addons": _list_addons,
}.items():
    setattr(eks_responses.EKSResponse, _name, _fn)

eks_urls.url_paths.update(
    {
        "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations$": eks_urls.response.dispatch,
        "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations/(?P<associationId>[^/]+)$": eks_urls.response.dispatch,
        "{0}/clusters/(?P<name>[^/]+)/addons$": eks_urls.response.dispatch,
        "{0}/clusters/(?P<name>[^/]+)/addons/(?P<addonName>[^/]+)$": eks_urls.response.dispatch,
    }
)


def _tagged(backend, resource_arn):
    """An association's record by its ARN, else None (moto's own code tags clusters only)."""
    if ":podidentityassociation/" not in resource_arn:
        return None
    cluster_name, association_id = resource_arn.split(":podidentityassociation/", 1)[1].split("/", 1)
    return _association(backend, cluster_name, association_id)


_tag_resource = eks_models.EKSBackend.tag_resource
_untag_resource = eks_models.EKSBackend.untag_resource
_list_tags = eks_models.EKSBackend.list_tags_for_resource


def _tag_resource_with_associations(self, resource_arn, tags):
    a = _tagged(self, resource_arn)
    if a is None:
        return _tag_resource(self, resource_arn, tags)
    a["tags"].update(tags)


def _untag_resource_with_associations(self, resource_arn, tag_keys):
    a = _tagged(self, resource_arn)
    if a is None:
        return _untag_resource(self, resource_arn, tag_keys)
    for key in tag_keys if isinstance(tag_keys, list) else [tag_keys]:
        a["tags"].pop(key, None)


def _list_tags_with_associations(self, resource_arn):
    a = _tagged(self, resource_arn)
    return _list_tags(self, resource_arn) if a is None else a["tags"]


eks_models.EKSBackend.tag_resource = _tag_resource_with_associations
eks_models.EKSBackend.untag_resource = _untag_resource_with_associations
eks_models.EKSBackend.list_tags_for_resource = _list_tags_with_associations


if __name__ == "__main__":
    from moto.server import main

    sys.argv[0] = "moto_server"
    sys.exit(main())
