package onboard

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// apply creates or replaces an RBAC object: Grant's on the target, RegisterPull's on the hub.
func apply(ctx context.Context, cs kubernetes.Interface, obj any) error {
	rbac := cs.RbacV1()
	var err error
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		if _, err = rbac.ClusterRoles().Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = rbac.ClusterRoles().Update(ctx, o, metav1.UpdateOptions{})
		}
	case *rbacv1.ClusterRoleBinding:
		if _, err = rbac.ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = rbac.ClusterRoleBindings().Update(ctx, o, metav1.UpdateOptions{})
		}
	case *rbacv1.Role:
		if _, err = rbac.Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = rbac.Roles(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
		}
	case *rbacv1.RoleBinding:
		if _, err = rbac.RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = rbac.RoleBindings(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
		}
	default:
		return fmt.Errorf("not an RBAC object: %T", obj)
	}
	if err != nil {
		m, _ := obj.(metav1.Object)
		return fmt.Errorf("writing %T %s/%s: %w", obj, m.GetNamespace(), m.GetName(), err)
	}
	return nil
}

// Revoke deletes what Grant made on the target: its ClusterRole and ClusterRoleBinding, its Role
// and RoleBinding in every namespace, and the ServiceAccount (its tokens stop working). The
// namespace stays. Objects already gone are not an error.
func Revoke(ctx context.Context, cs kubernetes.Interface) error {
	sel := metav1.ListOptions{LabelSelector: ManagedByLabel + "=true"}
	rbac := cs.RbacV1()
	var errs []error
	note := func(err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	note(rbac.ClusterRoleBindings().Delete(ctx, ServiceAccount, metav1.DeleteOptions{}))
	note(rbac.ClusterRoles().Delete(ctx, ServiceAccount, metav1.DeleteOptions{}))
	if rbs, err := rbac.RoleBindings("").List(ctx, sel); err == nil {
		for _, rb := range rbs.Items {
			note(rbac.RoleBindings(rb.Namespace).Delete(ctx, rb.Name, metav1.DeleteOptions{}))
		}
	} else {
		note(err)
	}
	if roles, err := rbac.Roles("").List(ctx, sel); err == nil {
		for _, r := range roles.Items {
			note(rbac.Roles(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{}))
		}
	} else {
		note(err)
	}
	note(cs.CoreV1().ServiceAccounts(Namespace).Delete(ctx, ServiceAccount, metav1.DeleteOptions{}))
	if len(errs) > 0 {
		return fmt.Errorf("revoking Holdfast's access on the target: %w", errors.Join(errs...))
	}
	return nil
}
